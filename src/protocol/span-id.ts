// Span ids derived from the ids the log already has (the turn, a model call's step, a tool call, a
// sub-agent), so every event of a call carries the same span id without any state: the runtime stamps them
// on events (engine/trace.ts) and the span fold (turn-spans.ts) derives an orchestration step's from its
// child session's id, on the server and in the client alike.

/** Span ids already derived: a turn's events ask for the same few (its own, its calls') again and again. */
const spans = new Map<string, string>();

/** A 16-hex-digit span id derived from the trace and an id of the log (FNV-1a, two 32-bit lanes). */
export function spanId(traceId: string, of: string): string {
  const text = `${traceId}/${of}`;
  let id = spans.get(text);
  if (id === undefined) {
    if (spans.size >= 4096) spans.clear();
    id = hashSpan(text);
    spans.set(text, id);
  }
  return id;
}

function hashSpan(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 13);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}
