// Opaque, URL-safe ids: a readable prefix plus 96 random bits.
export function randomId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  let hex = "";
  for (const b of bytes) hex += b.toString(16).padStart(2, "0");
  return `${prefix}_${hex}`;
}
