// What a protocol surface adds to a turn: the same one-call turn (the scripted model, a few text deltas) in an
// existing session, natively (POST .../turns, watched over a WebSocket until its terminal event) and as an
// A2A 1.0 task (a blocking SendMessage on the session's contextId, answered when the task completes),
// interleaved, with a warm-up of each first.
import { median, now, terminalAny } from "./client.mjs";

const MODEL = "loop-s0-c0-d5";

async function nativeTurn(api, sid) {
  const sub = api.subscribe(sid, await api.lastSequence(sid), { keep: false, deflate: false });
  await sub.opened;
  const done = sub.waitFor(terminalAny);
  const t0 = now();
  await api.submit(sid);
  await done;
  const ms = now() - t0;
  sub.close();
  return ms;
}

let messages = 0;
async function a2aTask(api, contextId) {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method: "SendMessage",
    params: { message: { messageId: `bench-${++messages}`, role: "ROLE_USER", parts: [{ text: "go" }], contextId } },
  };
  const t0 = now();
  const res = await api.req("POST", "/a2a/bench-a2a", body);
  const ms = now() - t0;
  if (res.result?.task?.status?.state !== "TASK_STATE_COMPLETED") throw new Error(`A2A task: ${JSON.stringify(res).slice(0, 300)}`);
  return { ms, contextId: res.result.task.contextId };
}

export async function protocols(stack, cfg, say) {
  const { api } = stack;
  await api.req("PUT", "/v1/agents/bench-a2a", { model: `openai-compatible:${MODEL}`, tools: ["calculator"] });
  const sid = (await api.req("POST", "/v1/sessions", { agent: "bench-a2a" })).session_id;
  const { contextId } = await a2aTask(api, undefined);
  for (let i = 0; i < cfg.warmup; i++) {
    await nativeTurn(api, sid);
    await a2aTask(api, contextId);
  }
  const native = [];
  const a2a = [];
  for (let i = 0; i < cfg.protocols.runs; i++) {
    native.push(await nativeTurn(api, sid));
    a2a.push((await a2aTask(api, contextId)).ms);
  }
  const out = { runs: cfg.protocols.runs, native_ms: median(native), a2a_ms: median(a2a), added_ms: median(a2a.map((ms, i) => ms - native[i])) };
  say(`protocols: native turn ${out.native_ms.toFixed(1)} ms, A2A task ${out.a2a_ms.toFixed(1)} ms (added ${out.added_ms.toFixed(1)} ms, ${out.runs} runs)`);
  return out;
}

/** Table rows for bench/run.mjs. */
export function protocolRows(r, row, f) {
  row(
    "A2A task (blocking SendMessage) / native turn",
    `${f(r.a2a_ms)} / ${f(r.native_ms)} ms`,
    `added ${f(r.added_ms)} ms (median of paired differences); one model call with 5 text deltas in an existing session; native = POST turn + WS to its end; ${r.runs} runs`,
  );
}
