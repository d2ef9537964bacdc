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

/** The session's status over HTTP: 200, or the error said plainly (a wrong URL, key or session, an erased session). */
async function probe() {
  try {
    const res = await fetch(`${url}/v1/sessions/${encodeURIComponent(sessionId)}/thread`, { headers: { authorization: `Bearer ${key}` } });
    if (res.ok) return { ok: true };
    const body = await res.json().catch(() => null);
    return { ok: false, status: res.status, message: `${res.status} ${body?.error?.code ?? ""}: ${body?.error?.message ?? res.statusText}` };
  } catch (err) {
    return { ok: false, message: `cannot reach ${url}: ${err?.cause?.code ?? err?.message ?? err} (is the runtime running? set AGENT_RUNTIME_URL)` };
  }
}

// Ask over HTTP first: a wrong URL, key or session is said plainly instead of a socket closing silently.
const first = await probe();
if (!first.ok) {
  console.error(first.message);
  process.exit(1);
}

/** The server closes the sockets of an erased session (DELETE, or its retention period) with this code. */
const SESSION_ERASED_CLOSE = 4010;
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
const erased = () => {
  console.error(`the session ${sessionId} was erased; there is nothing to resume`);
  process.exit(1);
};
ws.addEventListener("close", (ev) => {
  if (ev.code === SESSION_ERASED_CLOSE) erased();
  console.log(`closed (${ev.code}); ${resumeLine()}`);
  process.exit(0);
});
// Node's WebSocket fires "close" only once the server has ended the TCP connection, which `wrangler dev`
// delays by about 10 s; a close frame from the server shows at once as CLOSING, so look then whether the
// session is gone.
const closing = setInterval(async () => {
  if (ws.readyState !== WebSocket.CLOSING) return;
  clearInterval(closing);
  if ((await probe()).status === 404) erased();
}, 100);
// Ctrl-C: say where to resume at once; the close handshake is not worth waiting for.
process.on("SIGINT", () => {
  console.log(`\nstopped; ${resumeLine()}`);
  process.exit(0);
});
