// Event cursors (`after`, `Last-Event-ID`) are plain non-negative decimal integers: "0", "17". Anything else
// ("0x10", "1e1", "", " 3 ", "017", "-1") is refused, so a cursor never silently means another sequence.
import { parseInteger } from "./strict-values";

/** The cursor's sequence, or null when `raw` is not a plain non-negative decimal integer. */
export function parseCursor(raw: string): number | null {
  const parsed = parseInteger(raw, { min: 0, max: Number.MAX_SAFE_INTEGER });
  return parsed.ok ? parsed.value : null;
}
