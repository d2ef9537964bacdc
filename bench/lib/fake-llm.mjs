// A zero-latency, stateless, scripted Chat Completions server for the benchmarks (node:http only).
//
// The behaviour is encoded in the model name, so any number of sessions and runs can share one server
// and nothing has to be uploaded first:
//
//   loop-s<S>-c<C>-d<D>[-w<W>][-a<A>][-n<N>][-t<TOOL>]
//     S  model calls that ask for tools before the final answer
//     C  parallel tool calls in each of those responses: `calculator`, or TOOL (`lookup`: the webhook below)
//     D  text deltas (SSE chunks) in the final answer, each W characters (default 2)
//     A  characters of padding in each TOOL call's arguments (a `note`), so the conversation grows by about A
//        a call, as with a model that writes files or long queries (default 0)
//     N  with TOOL `run_code` (code mode): each call is a script making N `lookup` calls in turn (default 10)
//
// The model `down` answers every request 503 at once (with retry-after-ms: 0), a provider in an outage.
// POST /v1/_tools/lookup is a zero-latency webhook tool: it answers every call with a small JSON result.
// POST /v1/embeddings embeds with the model `embed-<dims>`: each text a unit vector of the clustered corpus of
// bench/memory/corpus.mjs, its topic and noise chosen by a hash of the text.
// GET /marks answers (and forgets) when each request since the last GET /marks arrived and when its response
// was sent, in microseconds of the monotonic clock (process.hrtime, which every process here shares), and
// its body's size in bytes.
//
// Which response to give is read from the conversation: the number of assistant messages with tool
// calls after the last user message. Streaming (`stream: true`, as the runtime's streamText uses) and
// non-streaming (`generateText` in the baseline worker) are both served. Run directly
// (`node bench/lib/fake-llm.mjs <port>`) it prints `listening <port>` and serves until killed.
import { createServer } from "node:http";
import { corpusVector, topicOf } from "../memory/corpus.mjs";

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

export function parseModel(name) {
  const m = /^loop-s(\d+)-c(\d+)-d(\d+)(?:-w(\d+))?(?:-a(\d+))?(?:-n(\d+))?(?:-t([a-z_]+))?$/.exec(name);
  if (!m) return null;
  const [steps, calls, deltas, width, pad, inner] = [m[1], m[2], m[3], m[4] ?? 2, m[5] ?? 0, m[6] ?? 10].map(Number);
  return { steps, calls, deltas, width, pad, inner, tool: m[7] ?? "calculator" };
}

let callCounter = 0;
let completionCounter = 0;
export const stats = { requests: 0, bytesIn: 0 };
let marks = [];
const micros = () => Number(process.hrtime.bigint() / 1000n);

/** What the scripted model answers, given the request body: tool calls, or a final text split in deltas. */
export function respond(body) {
  const spec = parseModel(String(body.model));
  if (!spec) return { error: `unknown bench model ${body.model}` };
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === "user") lastUser = i;
  });
  const done = messages.slice(lastUser + 1).filter((m) => m.role === "assistant" && Array.isArray(m.tool_calls) && m.tool_calls.length > 0).length;
  if (done < spec.steps) {
    const calls = [];
    for (let i = 0; i < spec.calls; i++) {
      calls.push({ id: `call_${++callCounter}`, type: "function", function: toolCall(spec, done, i) });
    }
    return { calls };
  }
  const word = `${"w".repeat(Math.max(1, spec.width - 1))} `;
  const pieces = Array.from({ length: spec.deltas }, () => word);
  if (pieces.length === 0) pieces.push("ok");
  return { pieces };
}

/** The function call a tool-calling response makes: its name and arguments (JSON text). */
function toolCall(spec, done, i) {
  if (spec.tool === "calculator") return { name: "calculator", arguments: JSON.stringify({ expression: `(${done} + ${i}) * 3 - 1` }) };
  if (spec.tool === "run_code") {
    const code = `const found = [];\nfor (let i = 0; i < ${spec.inner}; i++) found.push(await tools.lookup({ query: "item ${done}." + i }));\nreturn found.length;`;
    return { name: "run_code", arguments: JSON.stringify({ code }) };
  }
  return { name: spec.tool, arguments: JSON.stringify({ query: `item ${done}.${i}`, ...(spec.pad ? { note: "n".repeat(spec.pad) } : {}) }) };
}

function completionChunks(model, r, includeUsage) {
  const id = `chatcmpl-bench-${++completionCounter}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta, finish = null) => ({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out = [];
  if (r.calls) {
    out.push(chunk({ role: "assistant", content: null }));
    r.calls.forEach((tc, index) => {
      out.push(chunk({ tool_calls: [{ index, id: tc.id, type: "function", function: { name: tc.function.name, arguments: tc.function.arguments } }] }));
    });
    out.push(chunk({}, "tool_calls"));
  } else {
    for (const [i, p] of r.pieces.entries()) out.push(chunk(i === 0 ? { role: "assistant", content: p } : { content: p }));
    out.push(chunk({}, "stop"));
  }
  if (includeUsage) out.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage: USAGE });
  return out;
}

function completion(model, r) {
  return {
    id: `chatcmpl-bench-${++completionCounter}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: r.calls ? { role: "assistant", content: null, tool_calls: r.calls } : { role: "assistant", content: r.pieces.join("") },
        finish_reason: r.calls ? "tool_calls" : "stop",
      },
    ],
    usage: USAGE,
  };
}

export function startFakeLlm(port = 0) {
  const server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/marks") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(marks));
      marks = [];
      return;
    }
    const mark = { url: req.url, arrived_us: micros(), sent_us: 0, bytes: 0 };
    marks.push(mark);
    res.on("finish", () => {
      mark.sent_us = micros();
    });
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      mark.bytes = raw.length;
      stats.requests += 1;
      stats.bytesIn += raw.length;
      if (req.method === "GET" && req.url === "/stats") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify(stats));
      }
      if (req.method === "POST" && req.url === "/v1/embeddings") {
        const body = JSON.parse(raw.toString("utf8"));
        const dims = Number(/^embed-(\d+)$/.exec(body.model)?.[1] ?? 1536);
        const hash = (text) => [...text].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7) % 1_000_000;
        const data = body.input.map((text, index) => ({
          object: "embedding",
          index,
          embedding: [...corpusVector(-1 - hash(text), topicOf(hash(text)), dims)],
        }));
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ object: "list", data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
      }
      if (req.method === "POST" && req.url === "/v1/_tools/lookup") {
        const call = JSON.parse(raw.toString("utf8") || "{}");
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ result: `found ${call.args?.query ?? call.query ?? "?"}` }));
      }
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      }
      let body;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: { message: "invalid JSON" } }));
      }
      if (body.model === "down") {
        // A provider that is down: 503 at once, asking for an immediate retry (bench/fallback.mjs).
        res.writeHead(503, { "content-type": "application/json", "retry-after-ms": "0" });
        return res.end(JSON.stringify({ error: { message: "overloaded", type: "server_error" } }));
      }
      const r = respond(body);
      if (r.error) {
        res.writeHead(400, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: { message: r.error, type: "invalid_request_error" } }));
      }
      if (body.stream === true) {
        const includeUsage = body.stream_options?.include_usage === true;
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        // One write for the whole stream: zero latency, and the client still parses one SSE event per chunk.
        let text = "";
        for (const c of completionChunks(body.model, r, includeUsage)) text += `data: ${JSON.stringify(c)}\n\n`;
        res.end(`${text}data: [DONE]\n\n`);
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(completion(body.model, r)));
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve({ server, port: server.address().port }));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { port } = await startFakeLlm(Number(process.argv[2] ?? 0));
  console.log(`listening ${port}`);
}
