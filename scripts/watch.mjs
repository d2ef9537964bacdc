#!/usr/bin/env -S node --experimental-websocket
// Watches a session's events over the WebSocket, from a cursor: `npm run watch -- <session_id> [after]`.
// Prints one line per event and, when the connection drops, the sequence to resume from.
const [sessionId, afterArg = "0"] = process.argv.slice(2);
const base = (process.env.RUNTIME_URL ?? "http://127.0.0.1:8787").replace(/^http/, "ws");
const key = process.env.KEY;
if (!sessionId || !key) {
  console.error("usage: KEY=<api key> npm run watch -- <session_id> [after]   (RUNTIME_URL defaults to http://127.0.0.1:8787)");
  process.exit(2);
}
if (typeof WebSocket === "undefined") {
  console.error("This Node has no WebSocket; run with: node --experimental-websocket scripts/watch.mjs ...");
  process.exit(2);
}

let last = Number(afterArg);
const ws = new WebSocket(`${base}/v1/sessions/${sessionId}/ws?after=${last}&access_token=${encodeURIComponent(key)}`);
ws.addEventListener("message", (msg) => {
  const e = JSON.parse(String(msg.data));
  if (e.type === "reply") return console.log("reply", JSON.stringify(e));
  last = e.sequence;
  const p = e.payload;
  const detail =
    e.type === "model.delta"
      ? JSON.stringify(p.text)
      : e.type === "tool.started"
        ? `${p.name} ${JSON.stringify(p.args)}`
        : e.type === "tool.result"
          ? `${p.name} -> ${JSON.stringify(p.output).slice(0, 120)}`
          : e.type === "turn.completed"
            ? `${p.stop_reason}: ${JSON.stringify(p.output).slice(0, 200)}`
            : "";
  console.log(`${String(e.sequence).padStart(5)} ${e.type.padEnd(22)} ${detail}`);
});
ws.addEventListener("close", (ev) => {
  console.log(`closed (${ev.code}); resume with: npm run watch -- ${sessionId} ${last}`);
  process.exit(0);
});
process.on("SIGINT", () => ws.close());
