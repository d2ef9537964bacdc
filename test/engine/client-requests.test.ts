// The client builds every request from its operation's declaration (src/client/operation-request.ts): a path's
// `{name}` segments are filled URI-encoded, undefined query values are left out, and each public method of the
// client reaches a declared operation with the parameters it was given, its query names declared and its JSON
// body what the declaration accepts; every operation the client's source names is reached by some method.
/// <reference types="vite/client" />
import { describe, expect, expectTypeOf, it } from "vitest";
import { HttpApi } from "../../src/client/http-api";
import { operationPath, type RequestArgs } from "../../src/client/operation-request";
import type { ErasureLeft, TurnSubmitted } from "../../src/client/types";
import { files, OPERATIONS, type Operation, sessions, turns } from "../../src/protocol/operations";

/** The client's source files, as text (read by Vite: the engine lane has no Node types). */
const CLIENT_SOURCES = import.meta.glob<string>("../../src/client/*.ts", { query: "?raw", import: "default", eager: true });
/** An id with what a path must encode: a slash, a space, a question mark, a percent sign and characters beyond ASCII. */
const ODD = "a/b c?d%e é😀";

describe("a path from a declaration", () => {
  it("fills each {name} segment URI-encoded and keeps the rest of the declared path", () => {
    const path = operationPath(turns.replayTurn, { sid: ODD, turn_id: "t 1" });
    expect(path).toBe(`/v1/sessions/${encodeURIComponent(ODD)}/turns/t%201/replay`);
    expect(path.split("/")).toHaveLength(turns.replayTurn.path.split("/").length);
    expect(decodeURIComponent(path.split("/")[3]!)).toBe(ODD);
  });

  it("appends the query, encoded, leaving out undefined values and keeping numbers and booleans as text", () => {
    const path = operationPath(sessions.listSessions, {}, { agent: ODD, status: undefined, limit: 5, cursor: "x&y=z", "metadata.k é": "v" });
    const url = new URL(`http://h${path}`);
    expect(url.pathname).toBe("/v1/sessions");
    expect([...url.searchParams]).toEqual([
      ["agent", ODD],
      ["limit", "5"],
      ["cursor", "x&y=z"],
      ["metadata.k é", "v"],
    ]);
    expect(operationPath(sessions.listSessions, {}, { agent: undefined })).toBe("/v1/sessions");
  });

  it("refuses a path parameter that is missing", () => {
    expect(() => operationPath(sessions.getSession, {})).toThrow(/getSession: the path parameter sid is missing/);
  });
});

type Methods = { [K in keyof HttpApi]: HttpApi[K] extends (...args: never[]) => unknown ? K : never }[keyof HttpApi];

/** Arguments for every public method (a new method fails type checking until it has a row). */
const CALLS: { [M in Methods]: Parameters<HttpApi[M]> } = {
  putAgent: [ODD, { model: "demo:echo", instructions: "hi" }],
  getAgent: [ODD],
  listAgents: [],
  deleteAgent: [ODD],
  listAgentVersions: [ODD],
  getAgentVersion: [ODD, ODD],
  diffAgentVersions: [ODD, ODD, 1],
  listAgentLabels: [ODD],
  putAgentLabel: [ODD, ODD, 2],
  getAgentTraffic: [ODD],
  putAgentTraffic: [ODD, [{ label: "canary", weight: 10 }]],
  moveSessionAgent: [ODD, 2],
  createSession: [{ agent: "helper", metadata: { k: "v" } }],
  listSessions: [{ agent: ODD, status: "idle", limit: 5, created_after: 10, metadata: { "team é": ODD } }],
  eraseSession: [ODD],
  getMemory: [ODD, ODD],
  putMemory: [ODD, { a: 1 }, ODD],
  patchMemory: [ODD, { a: null }],
  searchMemory: [ODD, "words", 3],
  eraseResource: [ODD, { sessions: true }],
  usage: [{ group_by: "day", agent: ODD }],
  forkSession: [ODD, { at_sequence: 3 }],
  replayTurn: [ODD, ODD, { tools: "recorded" }],
  getReplay: [ODD],
  createEvalRun: [{ agent: "a", dataset: { name: "d" }, scorers: [{ type: "exact" }] }],
  getEvalRun: [ODD],
  listEvalRuns: [{ agent: ODD, status: "cancelled", limit: "5", cursor: "c" }],
  cancelEvalRun: [ODD],
  versionScores: [ODD, ODD],
  getSession: [ODD],
  getThread: [ODD],
  submitTurn: [ODD, "hello"],
  regenerate: [ODD, ODD, { idempotency_key: "k" }],
  uploadFile: [ODD, new Uint8Array([1, 2]), { mediaType: "text/plain", filename: ODD }],
  listFiles: [ODD, { limit: 2, cursor: ODD }],
  downloadFile: [ODD, ODD, { range: { start: 1 } }],
  deleteFile: [ODD, ODD],
  interrupt: [ODD, "why"],
  continueTurn: [ODD, ODD, "why"],
  injectMessage: [ODD, "more"],
  inject: [ODD, "more"],
  respondAction: [ODD, ODD, "approve", "fine"],
  answer: [ODD, ODD, { pick: 1 }],
  removeQueued: [ODD, ODD],
  promoteQueued: [ODD, ODD],
  eventsPage: [ODD, { after: 2, limit: 10 }],
  readLog: [ODD],
  chatMessages: [ODD, { limit: 4, before: ODD }],
  tree: [ODD, ODD],
  tools: [ODD],
  artifact: [ODD, ODD],
  socketUrl: [ODD, 7, "c"],
};

interface Sent {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: unknown;
}

/** The client on a fetch that records each request and answers a body every method can read. */
function recordingClient(): { api: HttpApi; sent: Sent[] } {
  const sent: Sent[] = [];
  const answer = JSON.stringify({ agents: [], events: [], next_after: 0, has_more: false, left: [] });
  const api = new HttpApi({
    url: "http://runtime.test/",
    key: "k",
    fetch: async (url, init) => {
      sent.push({ method: init?.method ?? "GET", url: new URL(url), headers: init?.headers ?? {}, body: init?.body });
      return new Response(answer, { status: 200, headers: { "content-type": "application/json" } });
    },
  });
  return { api, sent };
}

const pattern = (op: Operation) => new RegExp(`^${op.path.replace(/\{(\w+)\}/g, "(?<$1>[^/]+)")}$`);

/** The declared operation a request reaches, with its path parameters decoded. */
function reached(method: string, url: URL): { op: Operation; params: Record<string, string> } {
  const found = OPERATIONS.flatMap((op) => {
    const match = op.method.toUpperCase() === method ? pattern(op).exec(url.pathname) : null;
    return match ? [{ op, params: Object.fromEntries(Object.entries(match.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)])) }] : [];
  });
  expect(found, `${method} ${url.pathname}`).toHaveLength(1);
  return found[0]!;
}

/** The operations the client's source names (`<area>.<operationId>` of an imported declaration module). */
function namedInClientSource(): Set<string> {
  const ids = new Set(OPERATIONS.map((op) => op.operationId));
  const named = new Set<string>();
  for (const text of Object.values(CLIENT_SOURCES)) {
    const areas = [...text.matchAll(/import \* as (\w+) from "\.\.\/protocol\/operations\/\w+"/g)].map((m) => m[1]!);
    for (const area of areas) for (const m of text.matchAll(new RegExp(`\\b${area}\\.(\\w+)`, "g"))) if (ids.has(m[1]!)) named.add(m[1]!);
  }
  return named;
}

describe("the client's requests", () => {
  it("each public method reaches a declared operation with its parameters, declared query names and a body its schema accepts", async () => {
    const { api, sent } = recordingClient();
    const used = new Set<string>();
    for (const [name, args] of Object.entries(CALLS)) {
      const before = sent.length;
      const result = (api[name as Methods] as (...a: unknown[]) => unknown)(...args);
      if (typeof result === "string") sent.push({ method: "GET", url: new URL(result.replace(/^ws/, "http")), headers: {}, body: undefined });
      else if (result && typeof result === "object" && Symbol.asyncIterator in result) for await (const _ of result as AsyncIterable<unknown>);
      else await result;
      expect(sent.length, name).toBeGreaterThan(before);
      for (const request of sent.slice(before)) {
        const { op, params } = reached(request.method, request.url);
        used.add(op.operationId);
        for (const [param, value] of Object.entries(params)) expect(value, `${name}: ${param}`).toBe(ODD);
        const declared = Object.keys(op.query?.shape ?? {});
        for (const key of request.url.searchParams.keys())
          expect(declared.includes(key) || (op === sessions.listSessions && key.startsWith("metadata.")), `${name}: ?${key}`).toBe(true);
        if (op.body && typeof request.body === "string") expect(op.body.schema.safeParse(JSON.parse(request.body)).error, name).toBeUndefined();
        if (op.body?.required) expect(request.headers["content-type"], name).toBe("application/json");
      }
    }
    const named = namedInClientSource();
    expect(named.size).toBeGreaterThan(30);
    expect([...named].filter((id) => !used.has(id))).toEqual([]);
  });

  it("sends the Range it is asked for, raw upload bytes with their media type, and reads a 204 as no body", async () => {
    const { api, sent } = recordingClient();
    await api.downloadFile("s", "f", { range: { start: 2, end: 9 } });
    expect(sent.at(-1)!.headers.range).toBe("bytes=2-9");
    const bytes = new Uint8Array([1, 2, 3]);
    await api.uploadFile("s", bytes, { mediaType: "image/png" });
    expect(sent.at(-1)).toMatchObject({ method: "POST", headers: { "content-type": "image/png" }, body: bytes });
    const erasing = new HttpApi({ url: "http://runtime.test", key: "k", fetch: async () => new Response(null, { status: 204 }) });
    expect(await erasing.eraseSession("s")).toEqual({ left: [] });
    expect(await erasing.deleteFile("s", "f")).toBeUndefined();
  });
});

/** The client's typed request, reachable from a test. */
class Probe extends HttpApi {
  send<O extends Operation>(op: O, ...args: RequestArgs<O>) {
    return this.call(op, ...args);
  }
}

describe("a request's types", () => {
  it("come from the declaration: its params, query names and body are checked, its answer is the declared one", async () => {
    const probe = new Probe({ url: "http://runtime.test", key: "k", fetch: async () => new Response("{}", { status: 202 }) });
    expectTypeOf(probe.send(turns.submitTurn, { params: { sid: "s" }, body: { input: "hi" } })).resolves.toEqualTypeOf<TurnSubmitted>();
    // A 204 or a body: what an erasure answers.
    expectTypeOf(probe.send(sessions.eraseSession, { params: { sid: "s" } })).resolves.toEqualTypeOf<ErasureLeft | undefined>();
    expectTypeOf(probe.send(files.deleteFile, { params: { sid: "s", file_id: "f" } })).resolves.toEqualTypeOf<undefined>();
    const refused = () => [
      // @ts-expect-error the path parameters are required
      probe.send(turns.submitTurn, { body: { input: "hi" } }),
      // @ts-expect-error a parameter the path does not name
      probe.send(sessions.getSession, { params: { session: "s" } }),
      // @ts-expect-error a query name the operation does not declare
      probe.send(files.listFiles, { params: { sid: "s" }, query: { page: 2 } }),
      // @ts-expect-error a body its schema does not take
      probe.send(turns.submitTurn, { params: { sid: "s" }, body: { text: "hi" } }),
      // @ts-expect-error a JSON body for an operation that declares none
      probe.send(turns.promoteQueuedTurn, { params: { sid: "s", turn_id: "t" }, body: { first: true } }),
    ];
    expect(typeof refused).toBe("function");
    expect(await probe.send(turns.submitTurn, { params: { sid: "s" }, body: { input: "hi" } })).toEqual({});
  });
});
