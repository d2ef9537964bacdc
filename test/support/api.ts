// Test helpers that drive the runtime through its public HTTP surface (SELF); every answer is held to its
// declared operation (declared.ts).
import { SELF } from "cloudflare:test";
import { expect } from "vitest";
import { verifyLog } from "../../src/engine/verify-log";
import { declarationMismatch } from "./declared";

export const KEY = "test-key";

/** What GET /v1/agents/:name returns for every field a PUT left out. */
export const AGENT_DEFAULTS = {
  model: "openai:gpt-4o",
  fallback_models: [],
  first_token_timeout_ms: null,
  model_timeout_ms: null,
  fallback_cooldown_ms: 60000,
  instructions: "",
  tools: [],
  http_tools: [],
  mcp_servers: [],
  handoffs: [],
  output_schema: null,
  max_steps: 10,
  temperature: 1,
  max_tokens: null,
  planning_enabled: false,
  planning_model: null,
  planning_instructions: "",
  budget_awareness: null,
  context_window: null,
  hitl_tools: [],
  approval_timeout_ms: 900000,
  emit_mcp_progress: true,
  injected_tool_args: {},
  allow_parallel_subagents: false,
  max_parallel_subagents: 3,
  budget: {},
};

const BASE = "https://runtime.test";

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function api<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
  const res = await SELF.fetch(`${BASE}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON (SSE); keep the text
  }
  expect(declarationMismatch(method, path, res.status, res.headers.get("content-type"), parsed), "the response against its declaration").toBeNull();
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/**
 * SELF.fetch for the client under test (src/client), holding each JSON answer to its declared operation as api()
 * does; a stream's body is left to the caller, unread.
 */
export async function declaredFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const res = await SELF.fetch(request);
  const type = res.headers.get("content-type");
  if (type?.toLowerCase().startsWith("application/json")) {
    const text = await res.clone().text();
    const body = text ? JSON.parse(text) : null;
    expect(
      declarationMismatch(request.method, new URL(request.url).pathname + new URL(request.url).search, res.status, type, body),
      "the response against its declaration",
    ).toBeNull();
  }
  return res;
}

/** `api` with another credential than the admin key: a key of another role, or a token. */
export function apiAs<T = any>(method: string, path: string, credential: string, body?: unknown): Promise<ApiResponse<T>> {
  return api<T>(method, path, body, { authorization: `Bearer ${credential}` });
}

export async function createAgent(config: Record<string, unknown>): Promise<void> {
  const res = await api("PUT", `/v1/agents/${config.name}`, config);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

export async function createSession(agent: string | Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/v1/sessions", { agent });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.session_id;
}

export async function submitTurn(sid: string, input: string, extra: Record<string, unknown> = {}) {
  const res = await api("POST", `/v1/sessions/${sid}/turns`, { input, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body as { turn_id: string; status: "accepted" | "queued" };
}

/** The log's events after `after`, page by page; each page is held to getEvents' schema, so every event to the catalog. */
async function readLog(sid: string, after: number): Promise<any[]> {
  const read: any[] = [];
  let cursor = after;
  for (;;) {
    const res = await api("GET", `/v1/sessions/${sid}/events?after=${cursor}&limit=1000`);
    expect(res.status).toBe(200);
    read.push(...res.body.events);
    if (!res.body.has_more) return read;
    cursor = res.body.next_after;
  }
}

/** Reads the log from `after`; a whole log (after = 0) must satisfy every invariant of verifyLog. */
export async function events(sid: string, after = 0): Promise<any[]> {
  const log = await readLog(sid, after);
  if (after === 0) expect(verifyLog(log), `invariants of the log of ${sid}`).toEqual([]);
  return log;
}

/**
 * Polls the log until `done` holds for it, then verifies the whole log and returns it. Each poll reads only the
 * events after the last one read (the log only grows), so waiting on a long log costs no more than on a short one.
 */
async function pollLog(sid: string, done: (log: any[]) => boolean, timeoutMs: number, failure: (log: any[]) => string): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  const log: any[] = [];
  for (;;) {
    log.push(...(await readLog(sid, log.at(-1)?.sequence ?? 0)));
    if (done(log)) {
      expect(verifyLog(log), `invariants of the log of ${sid}`).toEqual([]);
      return log;
    }
    if (Date.now() > deadline) throw new Error(failure(log));
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A log's event types, with the payload of the last event and of any failure, for a timeout's message. */
const describeLog = (log: any[]) =>
  [...log.map((e) => e.type), ...log.filter((e, i) => i === log.length - 1 || /failed|error/.test(e.type)).map((e) => JSON.stringify(e.payload))].join(",");

/** Polls the log until the turn has a terminal event; returns the whole log. */
export function waitForTurnEnd(sid: string, turnId: string, timeoutMs = 10_000): Promise<any[]> {
  const ended = (e: any) => e.turn_id === turnId && ["turn.completed", "turn.failed", "turn.cancelled"].includes(e.type);
  return pollLog(
    sid,
    (log) => log.some(ended),
    timeoutMs,
    (log) => `turn ${turnId} did not end; log: ${describeLog(log)}`,
  );
}

/** Polls until some event matches. */
export async function waitForEvent(sid: string, match: (e: any) => boolean, timeoutMs = 10_000): Promise<any> {
  return (
    await pollLog(
      sid,
      (log) => log.some(match),
      timeoutMs,
      (log) => `event did not arrive; log: ${describeLog(log)}`,
    )
  ).find(match);
}

/** Polls until the log holds at least `n` events of `type`. */
export function waitForCount(sid: string, type: string, n: number, timeoutMs = 10_000): Promise<any[]> {
  return pollLog(
    sid,
    (log) => log.filter((e) => e.type === type).length >= n,
    timeoutMs,
    () => `fewer than ${n} ${type} events arrived`,
  );
}

export function expectGapless(log: any[]): void {
  for (const [i, e] of log.entries()) expect(e.sequence).toBe(i + 1);
  expect(new Set(log.map((e) => e.event_id)).size).toBe(log.length);
}

/** A refusal: 422 whose details name exactly this parameter or field (with a reason matching, when given). */
export async function expectRefused(method: string, path: string, field: string, body?: unknown, reason?: RegExp | string): Promise<void> {
  const res = await api(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(422);
  expect(res.body.error.details, `${method} ${path}`).toEqual([
    { path: field, reason: typeof reason === "string" ? reason : expect.stringMatching(reason ?? /./) },
  ]);
}

/** A success (2xx); answers the body. */
export async function expectOk(method: string, path: string, body?: unknown): Promise<any> {
  const res = await api(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}
