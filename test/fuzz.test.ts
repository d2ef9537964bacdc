// A deterministic fuzz of the HTTP surface: every operation /openapi.json declares, called with real and bogus
// path ids, mutated bodies, queries and headers (media types included), as an admin key, a read key, a browser
// token and nobody. No answer may be a 5xx. FUZZ_REQUESTS (default 300) and FUZZ_SEED (default 29) are read
// through the worker's bindings (vitest.config.ts), e.g. `FUZZ_REQUESTS=10000 npx vitest run test/fuzz.test.ts`.
// Requests go to the Worker's fetch handler itself (the export SELF calls), not through SELF: in this pool
// version (vitest-pool-workers 0.23) each SELF.fetch costs more than the one before, whatever the Worker does
// (one answering a constant "ok" went from 29 ms to over 500 ms a request within 900 requests), which made a
// 10,000-request run crawl and end in a stack overflow inside SELF.fetch.
import { createExecutionContext, env } from "cloudflare:test";
import { expect, it } from "vitest";
import type { Env } from "../src/env";
import worker from "../src/worker";
import { KEY } from "./support/api";
import { toolURL } from "./support/fake-model";
import { HOSTILE_STRINGS, hostileValue, MEDIA_TYPES, mutate, RAW_BODIES, Rng, sample } from "./support/fuzz";

const BASE = "https://runtime.test";
const fuzzEnv = env as unknown as { FUZZ_REQUESTS?: string; FUZZ_SEED?: string };
const REQUESTS = Number(fuzzEnv.FUZZ_REQUESTS) || 300;
const SEED = Number(fuzzEnv.FUZZ_SEED) || 29;
/** The fixtures (agent, sessions, turn, schedule, subscription) are made again this often, as a fuzzed request may delete them. */
const REFRESH_EVERY = 200;
const AGENT = "fuzz_agent";

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
  await call("PUT", `/v1/agents/${AGENT}`, { model: "demo:fast" });
  const { token } = await call("POST", "/v1/tokens", { subject: "fuzzer", agent: AGENT, ttl_s: 3600 });
  const sid = (await call("POST", "/v1/sessions", { agent: AGENT, metadata: { fuzz: "yes" } })).session_id as string;
  const tokenSid = (await call("POST", "/v1/sessions", { agent: AGENT }, token)).session_id as string;
  // Not waited for: a fuzzed request may meet the turn running, queued or ended.
  const { turn_id } = await call("POST", `/v1/sessions/${sid}/turns`, { input: "hello" });
  const { schedule_id } = await call("POST", `/v1/sessions/${sid}/schedules`, { input: "later", every_s: 3600 });
  const { subscription_id } = await call("POST", `/v1/sessions/${sid}/subscriptions`, { url: toolURL("echo") });
  return { sid, tokenSid, turnId: turn_id, scheduleId: schedule_id, subscriptionId: subscription_id, token };
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
    };
    return byName[field];
  };
}

function queryString(op: Operation, rng: Rng): string {
  const params = new URLSearchParams();
  for (const name of op.query) if (rng.chance(0.5)) params.set(name, String(rng.chance(0.5) ? rng.pick(HOSTILE_STRINGS) : rng.int(50)));
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
