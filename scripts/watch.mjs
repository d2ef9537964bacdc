#!/usr/bin/env -S node --experimental-websocket
// Watches a session's events over the WebSocket, from a cursor: `npm run watch -- <session_id> [after]`.
// Prints one line per event and, when the connection drops or on Ctrl-C, the sequence to resume from.
// The runtime is at AGENT_RUNTIME_URL (default http://127.0.0.1:8787); the key is KEY.
const [sessionId, afterArg = "0"] = process.argv.slice(2);
const url = (process.env.AGENT_RUNTIME_URL ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
const key = process.env.KEY;
if (!sessionId || !key || !/^(0|[1-9][0-9]*)$/.test(afterArg)) {
  console.error("usage: KEY=<api key> npm run watch -- <session_id> [after]   (AGENT_RUNTIME_URL defaults to http://127.0.0.1:8787)");
  process.exit(2);
}
if (typeof WebSocket === "undefined") {
  console.error("This Node has no WebSocket; run with: node --experimental-websocket scripts/watch.mjs ...");
  process.exit(2);
}

// Ask over HTTP first: a wrong URL, key or session is said plainly instead of a socket closing silently.
try {
  const res = await fetch(`${url}/v1/sessions/${encodeURIComponent(sessionId)}/thread`, { headers: { authorization: `Bearer ${key}` } });
  if (!res.ok) {
    const body = await res.json().catch(() => null);
    console.error(`${res.status} ${body?.error?.code ?? ""}: ${body?.error?.message ?? res.statusText}`);
    process.exit(1);
  }
} catch (err) {
  console.error(`cannot reach ${url}: ${err?.cause?.code ?? err?.message ?? err} (is the runtime running? set AGENT_RUNTIME_URL)`);
  process.exit(1);
}

let last = Number(afterArg);
const resumeLine = () => `resume with: npm run watch -- ${sessionId} ${last}`;
const ws = new WebSocket(`${url.replace(/^http/, "ws")}/v1/sessions/${sessionId}/ws?after=${last}&access_token=${encodeURIComponent(key)}`);
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
ws.addEventListener("error", () => {
  console.error(`the WebSocket failed; ${resumeLine()}`);
  process.exit(1);
});
ws.addEventListener("close", (ev) => {
  console.log(`closed (${ev.code}); ${resumeLine()}`);
  process.exit(0);
});
// Ctrl-C: say where to resume at once; the close handshake is not worth waiting for.
process.on("SIGINT", () => {
  console.log(`\nstopped; ${resumeLine()}`);
  process.exit(0);
});
