// Reads a Server-Sent Events body: each event's `id:` and `data:` (the MCP route follows a session's log with it,
// the A2A tool a remote task's stream).

export interface SseEvent {
  id: string | undefined;
  data: string;
}

/** The events of an SSE stream, as they arrive; comments and events without data are skipped. */
export async function* sseEvents(reader: ReadableStreamDefaultReader<string>): AsyncGenerator<SseEvent> {
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value.replaceAll("\r\n", "\n");
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const lines = buffer.slice(0, cut).split("\n");
      buffer = buffer.slice(cut + 2);
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(l.startsWith("data: ") ? 6 : 5));
      const id = lines
        .find((l) => l.startsWith("id:"))
        ?.slice(3)
        .trim();
      if (data.length > 0) yield { id, data: data.join("\n") };
    }
  }
}
