// Event cursors (`after`, `Last-Event-ID`) are plain non-negative decimal integers: "0", "17". Anything else
// ("0x10", "1e1", "", " 3 ", "017", "-1") is refused, so a cursor never silently means another sequence.
const CURSOR = /^(0|[1-9][0-9]{0,15})$/;

/** The cursor's sequence, or null when `raw` is not a plain non-negative decimal integer. */
export function parseCursor(raw: string): number | null {
  return CURSOR.test(raw) ? Number(raw) : null;
}
