// Long-lived streams under `wrangler dev`, with real Node clients: SSE, the chat stream and WebSockets send
// keep-alives while nothing else happens (STREAM_KEEPALIVE_MS is 300 ms here), a chat turn queued behind
// another says so, and clients that go away (a dropped SSE or chat stream, a socket refused over the
// per-session cap, chat streams and exports dropped as they open) leave no error in the process's output.
import { fetch as upgrade } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const KEY = "keepalive-test-key";
const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY, STREAM_KEEPALIVE_MS: "300", MAX_SOCKETS_PER_SESSION: "1" });
}, 90_000);
afterAll(() => rt?.stop());

async function until<T>(probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const call = async (method: string, path: string, body?: unknown) =>
  (await fetch(`${rt.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })).json() as Promise<any>;

/** A session whose first turn waits for an approval: its streams are silent until someone decides. */
async function waitingSession(): Promise<{ sid: string; actionId: string }> {
  const agent = { name: "keepalive", model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] };
  const { session_id: sid } = await call("POST", "/v1/sessions", { agent });
  await call("POST", `/v1/sessions/${sid}/turns`, { input: "what is 2 * (3 + 4)?" });
  const thread = await until(async () => {
    const t = await call("GET", `/v1/sessions/${sid}/thread`);
    return t.status === "waiting_permission" && t;
  }, "the approval");
  return { sid, actionId: thread.pending_actions[0].action_id };
}

/** A streaming response read as text while it lasts; `abort` drops the connection as a client going away does. */
function streamed(path: string, init: RequestInit) {
  const controller = new AbortController();
  const state = { text: "" };
  const done = (async () => {
    const res = await fetch(`${rt.base}${path}`, { ...init, signal: controller.signal });
    expect(res.status).toBe(200);
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) state.text += decoder.decode(chunk as Uint8Array, { stream: true });
  })().catch(() => {});
  return { state, done, abort: () => controller.abort() };
}

const sse = (sid: string) => streamed(`/v1/sessions/${sid}/events?after=0`, { headers: { ...headers, accept: "text/event-stream" } });
const chatBody = (sid: string, text: string) =>
  JSON.stringify({ id: sid, messages: [{ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }] }], trigger: "submit-message" });
const chat = (sid: string, text: string) => streamed("/v1/chat", { method: "POST", headers, body: chatBody(sid, text) });

async function socket(sid: string) {
  const res = await upgrade(`${rt.base}/v1/sessions/${sid}/ws`, { headers: { authorization: `Bearer ${KEY}`, upgrade: "websocket" } });
  const ws = res.webSocket!;
  const frames: string[] = [];
  const state = { frames, closed: null as { code: number; reason: string } | null };
  ws.addEventListener("message", (m) => frames.push(String(m.data)));
  ws.addEventListener("close", (e) => {
    state.closed = { code: e.code, reason: e.reason };
  });
  ws.accept();
  return { ws, state };
}

const approve = (sid: string, actionId: string) => call("POST", `/v1/sessions/${sid}/actions/${actionId}`, { decision: "approve" });
const idle = (sid: string) => until(async () => (await call("GET", `/v1/sessions/${sid}/thread`)).status === "idle", "the session to be idle");

describe("keep-alives on long-lived streams", { retry: 1 }, () => {
  it("a silent SSE stream gets comments, a queued chat turn a data-queued part then comments, a socket ping frames", async () => {
    const { sid, actionId } = await waitingSession();
    const events = sse(sid);
    const queued = chat(sid, "and then?");
    const { ws, state } = await socket(sid);

    // The SSE stream replays the log, then stays open with comments only.
    await until(() => /event: action\.required[\s\S]*\n: keep-alive\n\n/.test(events.state.text), "a keep-alive comment after the replay");
    // The chat message is queued behind the waiting turn: start, data-queued, then comments.
    const chunks = await until(() => {
      const data = queued.state.text.split("\n\n").filter((b) => b.startsWith("data: "));
      return /\n\n: keep-alive\n\n/.test(queued.state.text) && data.map((b) => JSON.parse(b.slice(6)));
    }, "the queued part and a keep-alive on the chat stream");
    const [start, part] = chunks;
    expect(start).toMatchObject({ type: "start" });
    expect(part).toEqual({ type: "data-queued", id: start.messageId, data: { turn_id: start.messageId, position: 1 }, transient: true });
    // The socket gets its events, then ping frames from the session's alarm.
    await until(() => state.frames.filter((f) => f === '{"type":"ping"}').length >= 2, "two ping frames");

    await approve(sid, actionId);
    await queued.done; // the queued turn ran and its stream ended
    expect(queued.state.text.endsWith("data: [DONE]\n\n")).toBe(true);
    await idle(sid);
    events.abort();
    ws.close(1000, "done");
  }, 60_000);
});

// Each test looks only at what the process printed while it ran, so that a retry starts clean. One retry: on this
// 2-core machine under heavy CPU or fsync load beside it, 3 runs of this file in 26 failed one test (workerd printed
// the error once, or a queued chat stream was cut), as one clean clone's CI run did; a regression fails every run.
describe("clients that go away", { retry: 1 }, () => {
  it("a dropped SSE or chat stream and sockets refused over the cap print no error", async () => {
    const before = rt.output().length;
    const { sid, actionId } = await waitingSession();
    const events = sse(sid);
    const queued = chat(sid, "and then?");
    await until(() => events.state.text.includes("event: action.required") && queued.state.text.includes('"type":"start"'), "both streams");
    events.abort();
    queued.abort();

    // MAX_SOCKETS_PER_SESSION is 1: the next three are refused (1013, test/routes/auth/access.test.ts), and get no event.
    const served = await socket(sid);
    await until(() => served.state.frames.length > 0, "the served socket's replay");
    const refused = [await socket(sid), await socket(sid), await socket(sid)];

    // Events keep coming for the streams that went away: the turn goes on, then the queued one runs.
    await approve(sid, actionId);
    await idle(sid);
    await new Promise((r) => setTimeout(r, 1000)); // a few keep-alive intervals for what is left to notice
    for (const r of refused) expect(r.state.frames).toEqual([]);
    for (const { ws } of [served, ...refused]) ws.close(1000, "done");
    const output = rt.output().slice(before);
    expect(output).toContain('"route":"/v1/sessions/:sid/ws"');
    expect(output).not.toMatch(/Uncaught|Network connection lost/);
  }, 60_000);

  it("chat streams dropped as they open, while the answer streams, print at most a rare error", async () => {
    // Dropped as soon as its headers arrive, a chat stream is cut while its first chunks are being written. The
    // stream the Worker wrote itself made workerd print "Uncaught Error: Network connection lost" for about
    // every other one (10 of these 20); the session object's, written a batch of events at a time, for about one
    // in a few hundred, but in bursts: one clean clone's run printed it once in each of two tries of these 20.
    // Up to two are allowed here; any other error is not.
    const before = rt.output().length;
    const sids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { session_id: sid } = await call("POST", "/v1/sessions", { agent: { name: "dropped", model: "demo:fast" } });
      sids.push(sid);
      if (i % 3 === 2) {
        await dropOnOpen("/v1/chat", { method: "POST", headers, body: chatBody(sid, "tell me something") });
      } else {
        await call("POST", `/v1/sessions/${sid}/turns`, { input: "tell me something" });
        await dropOnOpen(`/v1/chat/${sid}/stream`, { headers });
      }
    }
    // The answers go on without their streams, and end.
    for (const sid of sids) await idle(sid);
    await new Promise((r) => setTimeout(r, 500));
    const output = rt.output().slice(before);
    expect(output).toContain('"route":"/v1/chat/:sid/stream"');
    const LOST = "Uncaught Error: Network connection lost";
    expect(output.split(LOST).length - 1).toBeLessThanOrEqual(2);
    expect(output.replaceAll(LOST, "")).not.toMatch(/Uncaught|Network connection lost/);
  }, 90_000);

  it("exports dropped as they open print no error", async () => {
    // The export streams the log page by page: pulled by workerd, a dropped one printed "Uncaught Error: Network
    // connection lost" for about every third.
    const sids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { session_id: sid } = await call("POST", "/v1/sessions", { agent: { name: "exported", model: "demo:fast" } });
      await call("POST", `/v1/sessions/${sid}/turns`, { input: "tell me something" });
      sids.push(sid);
    }
    for (const sid of sids) await idle(sid);
    const before = rt.output().length;
    for (let i = 0; i < 20; i++) await dropOnOpen(`/v1/sessions/${sids[i % 2]}/export`, { headers });
    await new Promise((r) => setTimeout(r, 500));
    const output = rt.output().slice(before);
    expect(output).toContain('"route":"/v1/sessions/:sid/export"');
    expect(output).not.toMatch(/Uncaught|Network connection lost/);
  }, 60_000);
});

/** Opens a streaming response and drops the connection as soon as its headers arrive. */
async function dropOnOpen(path: string, init: RequestInit): Promise<void> {
  const controller = new AbortController();
  const res = await fetch(`${rt.base}${path}`, { ...init, signal: controller.signal });
  expect(res.status).toBe(200);
  const reading = (async () => {
    for await (const _ of res.body!);
  })().catch(() => {});
  controller.abort();
  await reading;
}
