// A deterministic fuzz of the HTTP surface: every operation /openapi.json declares, called with real and bogus
// path ids (a session, its turn, schedule, subscription and file, a resource with working memory), mutated
// bodies (raw bytes and forms for the upload), queries and headers (media types included), as an admin key, a
// read key, a browser token and nobody. No answer may be a 5xx. Then the WebSocket: fuzzed command frames
// (mutated frames, malformed and deeply nested JSON, binary frames) on sockets of a key and of a token; no reply
// may be an internal_error, and each socket must still answer a valid frame afterwards. FUZZ_REQUESTS (default
// 300; the frames are half as many, at least 100) and FUZZ_SEED (default 29) are read through the worker's
// bindings (vitest.config.ts), e.g. `FUZZ_REQUESTS=10000 npx vitest run test/routes/fuzz.test.ts`.
// Requests go to the Worker's fetch handler itself (the export SELF calls), not through SELF: in the pool
// this was written against (vitest-pool-workers 0.23) each SELF.fetch cost more than the one before, whatever the Worker did
// (one answering a constant "ok" went from 29 ms to over 500 ms a request within 900 requests), which made a
// 10,000-request run crawl and end in a stack overflow inside SELF.fetch.
import { createExecutionContext, env } from "cloudflare:test";
import { expect, it } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../src/worker";
import { KEY } from "../support/api";
import { script, toolURL, uniqueId } from "../support/fake-model";
import { HOSTILE_STRINGS, hostileValue, MEDIA_TYPES, mutate, nested, RAW_BODIES, Rng, sample } from "../support/fuzz";
import { type ReplyFrame, until } from "../support/ws";

const BASE = "https://runtime.test";
const fuzzEnv = env as unknown as { FUZZ_REQUESTS?: string; FUZZ_SEED?: string };
const REQUESTS = Number(fuzzEnv.FUZZ_REQUESTS) || 300;
const SEED = Number(fuzzEnv.FUZZ_SEED) || 29;
/** The fixtures (agent, sessions, turn, schedule, subscription) are made again this often, as a fuzzed request may delete them. */
const REFRESH_EVERY = 200;
const AGENT = "fuzz_agent";
/** The resource the fixtures' session remembers for, with a working memory document. */
const RESOURCE = "fuzz-user";
/** Frames sent over the WebSocket. */
const FRAMES = Math.max(100, Math.floor(REQUESTS / 2));

interface Operation {
  method: string;
  path: string;
  query: string[];
  body: Record<string, any> | undefined;
}

interface Fixtures {
  sid: string;
  tokenSid: string;
  turnId: string;
  scheduleId: string;
  subscriptionId: string;
  fileId: string;
  token: string;
}

function send(url: string, init?: RequestInit): Promise<Response> {
  return Promise.resolve(worker.fetch(new Request(url, init), env as unknown as Env, createExecutionContext()));
}

/** A fixture's JSON answer, which must be a success. */
async function call(method: string, path: string, body: unknown, credential = KEY): Promise<any> {
  const res = await send(`${BASE}${path}`, {
    method,
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  expect(res.status, `${method} ${path}: ${JSON.stringify(answer)}`).toBeLessThan(300);
  return answer;
}

async function fixtures(): Promise<Fixtures> {
  await call("PUT", `/v1/agents/${AGENT}`, {
    model: "demo:fast",
    tools: ["ask_user", "update_working_memory", "recall"],
    memory: { working: { schema: { type: "object", properties: { units: { type: "string" } } } } },
  });
  const { token } = await call("POST", "/v1/tokens", { subject: "fuzzer", agent: AGENT, ttl_s: 3600 });
  const sid = (await call("POST", "/v1/sessions", { agent: AGENT, metadata: { fuzz: "yes" }, resource_id: RESOURCE })).session_id as string;
  await call("PUT", `/v1/resources/${RESOURCE}/memory?agent=${AGENT}`, { document: { units: "metric" } });
  const upload = await send(`${BASE}/v1/sessions/${sid}/files?filename=notes.txt`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "text/plain" },
    body: new TextEncoder().encode("fuzz notes"),
  });
  const file = (await upload.json()) as { file_id: string };
  expect(upload.status, JSON.stringify(file)).toBe(201);
  const tokenSid = (await call("POST", "/v1/sessions", { agent: AGENT }, token)).session_id as string;
  // Not waited for: a fuzzed request may meet the turn running, queued or ended.
  const { turn_id } = await call("POST", `/v1/sessions/${sid}/turns`, { input: "hello" });
  const { schedule_id } = await call("POST", `/v1/sessions/${sid}/schedules`, { input: "later", every_s: 3600 });
  const { subscription_id } = await call("POST", `/v1/sessions/${sid}/subscriptions`, { url: toolURL("echo") });
  return { sid, tokenSid, turnId: turn_id, scheduleId: schedule_id, subscriptionId: subscription_id, fileId: file.file_id, token };
}

function operations(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      const params = (op.parameters ?? []) as { in: string; name: string }[];
      const body = op.requestBody?.content?.["application/json"]?.schema;
      ops.push({ method: method.toUpperCase(), path, query: params.filter((p) => p.in === "query").map((p) => p.name), body });
    }
  }
  return ops;
}

const BOGUS_IDS = ["ses_000000000000000000000000", "x", "..", "%2e%2e", "%00", "ses_", "a".repeat(300), "🙂", "act_0", "sch_0", "sub_0", "turn_0"];

function pathParam(name: string, f: Fixtures, rng: Rng): string {
  if (rng.chance(0.3)) return encodeURIComponent(rng.pick(BOGUS_IDS));
  const real: Record<string, string[]> = {
    sid: [f.sid, f.tokenSid],
    name: [AGENT, "fuzz_other"],
    turn_id: [f.turnId],
    schedule_id: [f.scheduleId],
    subscription_id: [f.subscriptionId],
    exec_id: [f.sid],
    rid: [RESOURCE, "fuzzer"],
    file_id: [f.fileId],
  };
  return rng.pick(real[name] ?? BOGUS_IDS);
}

function hints(f: Fixtures, rng: Rng) {
  return (field: string): unknown => {
    const byName: Record<string, unknown> = {
      agent: rng.chance(0.7) ? AGENT : { model: "demo:fast" },
      model: "demo:fast",
      url: toolURL("echo"),
      input: "hi",
      content: "hi",
      at_sequence: rng.pick([1, 2, 0, -1, 10_000]),
      subject: "fuzzer",
      session_id: rng.pick([f.sid, f.tokenSid]),
      id: rng.pick([f.sid, `chat-${rng.int(5)}`]),
      messages: [{ id: `m${rng.int(100)}`, role: "user", parts: [{ type: "text", text: "hi" }] }],
      every_s: rng.pick([60, 3600, 1e308]),
      cron: rng.pick(["0 * * * *", "61 * * * *"]),
      at: new Date(Date.now() + 3600_000).toISOString(),
      ttl_s: 600,
      decision: "approve",
      tools: rng.pick([[], ["calculator"], ["nope"]]),
      document: rng.pick([{ units: "imperial" }, { units: 1 }, {}]),
      resource_id: RESOURCE,
    };
    return byName[field];
  };
}

function queryString(op: Operation, rng: Rng): string {
  const params = new URLSearchParams();
  const real: Record<string, () => string> = { agent: () => AGENT, q: () => rng.pick(["hello", "fuzz", "a OR b", '"x']), filename: () => "a.txt" };
  for (const name of op.query) {
    if (!rng.chance(0.5)) continue;
    const value = real[name] && rng.chance(0.5) ? real[name]() : rng.chance(0.5) ? rng.pick(HOSTILE_STRINGS) : rng.int(50);
    params.set(name, String(value));
  }
  if (op.path === "/v1/sessions" && rng.chance(0.3)) params.set(`metadata.${rng.pick(["fuzz", "a", "bad key"])}`, rng.pick(["yes", "x", ""]));
  if (rng.chance(0.15)) params.set(rng.pick(["after", "limit", "cursor", "unknown", "access_token"]), JSON.stringify(hostileValue(rng)).slice(0, 200));
  const s = params.toString();
  return s ? `?${s}` : "";
}

/** One request: who, what body under which media type, which headers; returned with a description for the report. */
function request(op: Operation, f: Fixtures, rng: Rng): { url: string; init: RequestInit; describe: string } {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => pathParam(name, f, rng));
  const url = `${BASE}${path}${queryString(op, rng)}`;
  const who = rng.pick(["admin", "admin", "admin", "read", "token", "token", "none", "garbage"] as const);
  const credential = { admin: KEY, read: "read-key", token: f.token, none: null, garbage: "e30.e30.e30" }[who];
  const headers: Record<string, string> = credential ? { authorization: `Bearer ${credential}` } : {};
  // An SSE stream (the events route) stays open until the status is read and the stream cancelled.
  if (rng.chance(0.1)) headers.accept = rng.pick(["application/json", "*/*", "text/html", "text/event-stream"]);
  // Header values must be visible ASCII, or fetch refuses to send them.
  if (rng.chance(0.05)) headers["last-event-id"] = rng.pick(HOSTILE_STRINGS.filter((v) => /^[\x20-\x7e]*$/.test(v))).slice(0, 100);
  let body: string | undefined;
  const sendsBody = op.body !== undefined || op.method === "POST" || (op.method !== "GET" && rng.chance(0.3));
  if (sendsBody && op.method !== "GET") {
    if (op.method === "POST" && op.path === "/v1/sessions/{sid}/files" && rng.chance(0.7)) {
      // The upload takes raw bytes or a form, not JSON.
      const [uploadBody, uploadType] = uploadOf(rng);
      return {
        url,
        init: { method: op.method, headers: { ...headers, ...(uploadType ? { "content-type": uploadType } : {}) }, body: uploadBody },
        describe: `${who} ${op.method} ${url} upload ${uploadType} ${uploadBody.byteLength} bytes`,
      };
    }
    if (op.path === "/mcp" || rng.chance(0.1)) {
      body = rng.chance(0.5) ? rng.pick(RAW_BODIES) : JSON.stringify(hostileValue(rng));
    } else {
      const valid = op.body ? sample(op.body, { rng, doc: docCache!, hint: hints(f, rng) }) : {};
      body = JSON.stringify(mutate(valid, rng));
    }
    const mediaType = rng.pick(MEDIA_TYPES);
    if (mediaType) headers["content-type"] = mediaType;
    if (op.path === "/mcp") headers.accept = "application/json, text/event-stream";
  }
  // A Uint8Array body carries no content-type of its own, so "none" is sent as none.
  const init: RequestInit = { method: op.method, headers, body: body === undefined ? undefined : new TextEncoder().encode(body) };
  const describe = `${who} ${op.method} ${url} ${JSON.stringify(headers)} ${body === undefined ? "" : body.slice(0, 300)}`;
  return { url, init, describe };
}

/** An upload's body and Content-Type: raw bytes under an allowed or refused type, or a multipart form, right or broken. */
function uploadOf(rng: Rng): [Uint8Array, string | null] {
  const text = rng.pick(["hello", "", "\u0000\u0001", "x".repeat(70_000), "🙂"]);
  const bytes = new TextEncoder().encode(text);
  switch (rng.int(4)) {
    case 0:
      return [bytes, rng.pick(["text/plain", "image/png", "application/json", "text/html", "application/x-msdownload", null])];
    case 1: {
      const name = rng.pick(["a.txt", "", "../../etc/passwd", "a/b", "x".repeat(300), "🙂.txt"]);
      const form = `--b\r\nContent-Disposition: form-data; name="${rng.pick(["file", "other"])}"; filename="${name}"\r\nContent-Type: ${rng.pick(["text/plain", "image/svg+xml", "nope"])}\r\n\r\n${text}\r\n--b--\r\n`;
      return [new TextEncoder().encode(form), "multipart/form-data; boundary=b"];
    }
    case 2:
      return [new TextEncoder().encode(rng.pick(["--b\r\n", "--b--", "garbage", ""])), rng.pick(["multipart/form-data; boundary=b", "multipart/form-data"])];
    default:
      return [new TextEncoder().encode(JSON.stringify(hostileValue(rng))), rng.pick(MEDIA_TYPES)];
  }
}

let docCache: any = null;

it(
  `no 5xx in ${REQUESTS} fuzzed requests over every declared operation (seed ${SEED})`,
  async () => {
    const docRes = await send(`${BASE}/openapi.json`);
    expect(docRes.status).toBe(200);
    docCache = await docRes.json();
    const ops = operations(docCache);
    expect(ops.length).toBeGreaterThan(35);
    const rng = new Rng(SEED);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let f = await fixtures();
    const started = Date.now();
    for (let i = 0; i < REQUESTS; i++) {
      if (i > 0 && i % REFRESH_EVERY === 0) f = await fixtures();
      const op = ops[i % ops.length]!; // every operation in turn, so a short run still reaches them all
      const { url, init, describe } = request(op, f, rng);
      let status: number;
      try {
        const res = await send(url, init);
        // Streams (SSE, the chat transport) stay open; the status is all this asks.
        await res.body?.cancel();
        status = res.status;
      } catch (err) {
        status = 500; // the worker threw instead of answering: a client would get a 500
        failures.push(`#${i} threw ${err}: ${describe}`);
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500 && failures.at(-1)?.startsWith(`#${i} `) !== true) failures.push(`#${i} ${status}: ${describe}`);
      if ((i + 1) % 1000 === 0) console.log(`fuzz: ${i + 1} requests, ${Date.now() - started} ms, ${failures.length} failures`);
    }
    console.log(
      `fuzz: ${REQUESTS} requests, seed ${SEED}, ${Date.now() - started} ms, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
    );
    expect(failures, failures.slice(0, 20).join("\n")).toEqual([]);
  },
  Math.max(60_000, REQUESTS * 200),
);

/** A socket opened through the Worker's fetch handler, recording the replies it gets. */
interface FuzzSocket {
  ws: WebSocket;
  replies: ReplyFrame[];
  closed: { code: number; reason: string } | null;
}

async function openSocket(sid: string, credential: string, query: string): Promise<FuzzSocket> {
  const res = await send(`${BASE}/v1/sessions/${sid}/ws?${query}`, { headers: { Upgrade: "websocket", authorization: `Bearer ${credential}` } });
  expect(res.status, await (res.status === 101 ? "" : res.clone().text())).toBe(101);
  const ws = res.webSocket!;
  const socket: FuzzSocket = { ws, replies: [], closed: null };
  ws.addEventListener("message", (m) => {
    const frame = JSON.parse(typeof m.data === "string" ? m.data : new TextDecoder().decode(m.data as ArrayBuffer));
    if (frame.type === "reply") socket.replies.push(frame);
  });
  ws.addEventListener("close", (e) => {
    socket.closed = { code: e.code, reason: e.reason };
  });
  ws.accept();
  return socket;
}

/** A command frame of each kind, as a client would send it (with real ids where it names one). */
function validFrame(f: Fixtures, rng: Rng): Record<string, unknown> {
  return rng.pick([
    () => ({ type: "ack", sequence: rng.pick([0, 1, 5, 10_000]) }),
    () => ({ type: "submit_turn", input: rng.pick(["hi", "ask me: why?", "what is 2 + 2?"]), on_busy: rng.pick(["enqueue", "reject", "inject"]) }),
    () => ({ type: "inject_message", content: "also this" }),
    () => ({ type: "interrupt", reason: "fuzz" }),
    () => ({ type: "respond_action", action_id: rng.pick(["act_0", f.turnId]), decision: rng.pick(["approve", "reject"]), response: "fine" }),
  ])();
}

/** One fuzzed frame: a mutated command frame, a hostile value, malformed or deeply nested JSON, as text or bytes. */
function fuzzedFrame(f: Fixtures, rng: Rng): string | Uint8Array {
  let text: string;
  switch (rng.int(6)) {
    case 0:
    case 1: {
      const frame = mutate(validFrame(f, rng), rng);
      if (frame && typeof frame === "object" && !Array.isArray(frame) && rng.chance(0.7))
        (frame as Record<string, unknown>).request_id = rng.pick(["r", 7, null, "x".repeat(300)]);
      text = JSON.stringify(frame);
      break;
    }
    case 2:
      text = rng.pick(RAW_BODIES);
      break;
    case 3: {
      const levels = rng.pick([63, 64, 5_000, 50_000]);
      const open = rng.pick(["[", '{"a":']);
      const close = open === "[" ? "]" : "}";
      text = `{"type":"respond_action","action_id":"act_0","response":${open.repeat(levels)}1${rng.chance(0.8) ? close.repeat(levels) : ""}}`;
      break;
    }
    case 4:
      text = JSON.stringify({ type: rng.pick(["submit_turn", "respond_action", "nope"]), input: nested(rng.pick([10, 3000])), response: hostileValue(rng) });
      break;
    default:
      text = JSON.stringify(hostileValue(rng));
  }
  return rng.chance(0.2) ? new TextEncoder().encode(text) : text;
}

/**
 * A session whose scripted model asks question after question, each answered by any object: a deeply nested
 * answer reaches the action's validation and the log, where the other sockets' frames stop at a missing action.
 */
async function questionSession(questions: number): Promise<string> {
  const scriptId = uniqueId("fuzz-ask");
  const ask = { tool_calls: [{ name: "ask_user", arguments: { question: "Anything?", response_schema: { type: "object" } } }] };
  await script(scriptId, [...Array.from({ length: questions }, () => ask), { text: "done" }]);
  const agent = { name: "fuzz_asker", model: `openai-compatible:${scriptId}`, tools: ["ask_user"] };
  const sid = (await call("POST", "/v1/sessions", { agent })).session_id as string;
  await call("POST", `/v1/sessions/${sid}/turns`, { input: "ask" });
  return sid;
}

/** The question waiting on the session, once its turn has asked one or stopped running; null when none waits. */
async function waitingQuestion(sid: string): Promise<string | null> {
  const thread = await until(async () => {
    const body = (await (await send(`${BASE}/v1/sessions/${sid}/thread`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as any;
    return body.status === "running" ? null : body;
  }, `the thread of ${sid} to stop running`);
  return (thread.pending_actions[0]?.action_id as string | undefined) ?? null;
}

/** An answer to the waiting question: nested up to 50,000 levels, hostile, too long, mutated or valid, as text or bytes. */
function fuzzedAnswer(actionId: string, rng: Rng): string | Uint8Array {
  const head = `{"type":"respond_action","action_id":"${actionId}","request_id":"answer"`;
  let text: string;
  switch (rng.int(4)) {
    case 0:
    case 1: {
      const levels = rng.pick([63, 64, 5_000, 50_000]);
      const [open, close] = rng.pick([
        ['{"a":', "}"],
        ["[", "]"],
      ] as const);
      text = `${head},"response":{"x":${open.repeat(levels)}1${close.repeat(levels)}}}`;
      break;
    }
    case 2:
      text = JSON.stringify({ ...JSON.parse(`${head}}`), response: rng.pick([hostileValue(rng), { story: "x".repeat(20_001) }, "plain"]) });
      break;
    default:
      text = JSON.stringify(mutate({ ...JSON.parse(`${head}}`), response: { fine: true } }, rng));
  }
  return rng.chance(0.2) ? new TextEncoder().encode(text) : text;
}

it(
  `no internal_error in ${FRAMES} fuzzed WebSocket frames, and the sockets stay usable (seed ${SEED})`,
  async () => {
    const rng = new Rng(SEED + 1);
    const f = await fixtures();
    const asker = await questionSession(FRAMES);
    const sockets = [
      await openSocket(f.sid, KEY, "channel=fuzz"),
      await openSocket(f.tokenSid, f.token, "channel=fuzz-token"),
      await openSocket(asker, KEY, "channel=fuzz-asker"),
    ];
    const sent: string[] = [];
    for (let i = 0; i < FRAMES; i++) {
      const k = i % sockets.length;
      const socket = sockets[k]!;
      let frame: string | Uint8Array;
      if (k === 2) frame = fuzzedAnswer((await waitingQuestion(asker)) ?? "act_0", rng);
      else frame = fuzzedFrame(f, rng);
      sent.push(typeof frame === "string" ? frame.slice(0, 200) : `<${frame.byteLength} bytes>`);
      socket.ws.send(frame);
      // A probe after each frame: once its reply is in, the socket has taken the frame and still answers.
      const probe = `probe-${i}`;
      socket.ws.send(JSON.stringify({ type: "ack", sequence: 0, request_id: probe }));
      await until(() => socket.replies.some((r) => r.request_id === probe) || socket.closed, `the reply to ${probe} after ${sent.at(-1)}`);
      expect(socket.closed, `the socket closed after ${sent.at(-1)}`).toBeNull();
    }
    for (const [k, socket] of sockets.entries()) {
      const last = `last-${k}`;
      socket.ws.send(JSON.stringify({ type: "ack", sequence: 0, request_id: last }));
      const reply = await until(() => socket.replies.find((r) => r.request_id === last), `the reply to ${last}`);
      expect(reply, `socket ${k}`).toMatchObject({ ok: true });
      const internal = socket.replies.filter((r) => r.error?.code === "internal_error");
      expect(internal, `internal errors on socket ${k}: ${JSON.stringify(internal.slice(0, 5))}`).toEqual([]);
      expect(socket.closed).toBeNull();
      socket.ws.close(1000, "fuzz done");
    }
    // The answers recorded are the ones within the bound: no deeper one reached the log.
    const log = (await (await send(`${BASE}/v1/sessions/${asker}/events?limit=1000`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as any;
    const answers = log.events.filter((e: any) => e.type === "action.resolved" && e.payload.decision === "answered");
    for (const e of answers) expect(depthOf(e.payload.response), `answer #${e.sequence}`).toBeLessThan(64);
  },
  Math.max(60_000, FRAMES * 200),
);

/** How many levels of objects and arrays `value` nests (0 for a scalar), walked without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}
