// The TypeScript client (src/client) against the real worker, inside workerd: HTTP through SELF.fetch and
// WebSockets through a factory that upgrades with SELF.fetch. The factory wraps each socket so a test can
// drop it (as a network would: frames in flight are lost), or make it skip or repeat a frame.
import { abortAllDurableObjects, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { RuntimeClient, RuntimeError, type RuntimeEvent, type StreamStatus, type WebSocketLike } from "../../src/client";
import { verifyLog } from "../../src/engine/verify-log";
import { declaredFetch, KEY } from "../support/api";
import { requests, type Step, script, toolURL, uniqueId } from "../support/fake-model";
import { tinyPng, toBase64 } from "../support/files";

const BASE = "https://runtime.test";
const FAST = { initialMs: 5, maxMs: 40 };

type Listener = (ev: any) => void;

/** A workerd socket seen through a filter: `drop()` loses the connection, `filter` edits the frames delivered. */
class TestSocket implements WebSocketLike {
  private readonly listeners = new Map<string, Set<Listener>>();
  private dead = false;
  /** Event sequences delivered to the client through this socket. */
  readonly delivered: number[] = [];
  /** Frames the client sent. */
  readonly sent: any[] = [];

  constructor(
    readonly real: WebSocket,
    filter: (frame: any, socket: TestSocket) => any[] = (f) => [f],
  ) {
    real.addEventListener("message", (m) => {
      if (this.dead) return;
      const frame = JSON.parse(typeof m.data === "string" ? m.data : new TextDecoder().decode(m.data as ArrayBuffer));
      // The client asks for frames=batch: the filter sees each event, and what it lets through goes on as one frame.
      const passed = (Array.isArray(frame) ? frame : [frame]).flatMap((f) => filter(f, this));
      if (this.dead || passed.length === 0) return;
      for (const f of passed) if (typeof f.sequence === "number") this.delivered.push(f.sequence);
      this.emit("message", { data: JSON.stringify(Array.isArray(frame) ? passed : passed[0]) });
    });
    real.addEventListener("close", (e) => this.die(e.code, e.reason));
    real.addEventListener("error", () => this.die(1006, "error"));
    real.accept();
  }

  get readyState(): number {
    return this.dead ? 3 : this.real.readyState;
  }

  send(data: string): void {
    this.sent.push(JSON.parse(data));
    this.real.send(data);
  }

  close(code?: number, reason?: string): void {
    try {
      this.real.close(code, reason);
    } catch {
      // closed already
    }
    this.die(code ?? 1000, reason ?? "");
  }

  addEventListener(type: string, listener: Listener): void {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)!.add(listener);
  }

  /** The network goes away: nothing more is delivered, and the client sees an abnormal close. */
  drop(): void {
    try {
      this.real.close(1000, "test drop");
    } catch {
      // closed already
    }
    this.die(1006, "dropped by the test");
  }

  private die(code: number, reason: string): void {
    if (this.dead) return;
    this.dead = true;
    this.emit("close", { code, reason });
  }

  private emit(type: string, ev: unknown): void {
    for (const l of this.listeners.get(type) ?? []) l(ev);
  }
}

const allSockets: TestSocket[] = [];

interface Harness {
  client: RuntimeClient;
  sockets: TestSocket[];
  /** Every URL the client tried to open. */
  urls: string[];
}

/**
 * A client on SELF. `filter(frame, socket, index)` edits frames of the index-th socket; `refuse` makes the
 * factory fail without a status (as a browser's WebSocket does) the first `refuse` times.
 */
function harness(
  opts: {
    key?: string;
    filter?: (frame: any, socket: TestSocket, index: number) => any[];
    hideStatus?: boolean;
    refuse?: number;
    onConnect?: (url: string) => void;
  } = {},
): Harness {
  const sockets: TestSocket[] = [];
  const urls: string[] = [];
  let refusals = opts.refuse ?? 0;
  const client = new RuntimeClient({
    url: BASE,
    key: opts.key ?? KEY,
    fetch: declaredFetch,
    backoff: FAST,
    WebSocket: async (url: string) => {
      urls.push(url);
      opts.onConnect?.(url);
      if (refusals > 0) {
        refusals--;
        throw new Error("WebSocket connection failed");
      }
      const res = await SELF.fetch(url.replace(/^ws/, "http"), { headers: { Upgrade: "websocket" } });
      if (res.status !== 101 || !res.webSocket) {
        if (opts.hideStatus) {
          await res.text();
          throw new Error("WebSocket connection failed");
        }
        throw await RuntimeError.fromResponse(res);
      }
      const index = sockets.length;
      const s = new TestSocket(res.webSocket, opts.filter ? (f, sock) => opts.filter!(f, sock, index) : undefined);
      sockets.push(s);
      allSockets.push(s);
      return s;
    },
  });
  return { client, sockets, urls };
}

afterEach(() => {
  for (const s of allSockets.splice(0)) s.close();
});

/** An inline agent on the fake model, scripted with `steps`. */
async function scriptedSession(client: RuntimeClient, steps: Step[], config: Record<string, unknown> = {}): Promise<string> {
  const id = uniqueId("client");
  await script(id, steps);
  const { session_id } = await client.createSession({ agent: { name: "scripted", model: `openai-compatible:${id}`, ...config } });
  return session_id;
}

/** The whole log over HTTP (checked against the runtime's invariants). */
async function fullLog(client: RuntimeClient, sid: string): Promise<RuntimeEvent[]> {
  const log: RuntimeEvent[] = [];
  for await (const e of client.readLog(sid)) log.push(e);
  expect(verifyLog(log as any)).toEqual([]);
  return log;
}

async function rejection(p: Promise<unknown>): Promise<RuntimeError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(RuntimeError);
    return err as RuntimeError;
  }
  throw new Error("expected a rejection");
}

/** Collects events from `events()` until `stop` says so. */
async function collect(
  it: AsyncIterable<RuntimeEvent>,
  stop: (e: RuntimeEvent, all: RuntimeEvent[]) => boolean | void | Promise<boolean | void>,
): Promise<RuntimeEvent[]> {
  const seen: RuntimeEvent[] = [];
  for await (const e of it) {
    seen.push(e);
    if (await stop(e, seen)) break;
  }
  return seen;
}

const isEnd = (e: RuntimeEvent) => ["turn.completed", "turn.failed", "turn.cancelled"].includes(e.type);
const slowText = (chars: number): Step => ({ text: "abcdefghij".repeat(chars / 10), chunk_size: 2, delay_ms: 8 });

const DEPLOY = {
  name: "deploy",
  description: "Deploys",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
};

describe("typed calls", () => {
  it("covers the agent registry, sessions, turns, events, tree, tools, interrupt, inject and the queue", async () => {
    const { client } = harness();
    const name = `client-demo-${crypto.randomUUID().slice(0, 8)}`;
    const stored = await client.putAgent(name, { model: "demo:fast", tools: ["calculator"] });
    expect(stored).toMatchObject({ name, model: "demo:fast", tools: ["calculator"], max_steps: 10, hitl_tools: [] });
    expect(await client.getAgent(name)).toEqual(stored);
    expect((await client.listAgents()).map((a) => a.name)).toContain(name);

    const { session_id: sid, thread_id } = await client.createSession({ agent: name, metadata: { from: "client test" } });
    expect(sid).toMatch(/^ses_/);
    expect(thread_id).toEqual(expect.any(String));
    const snap = await client.getSession(sid);
    expect(snap).toMatchObject({ session_id: sid, status: "idle", turn_count: 0, metadata: { from: "client test" } });
    expect(snap.agent.name).toBe(name);
    expect((await client.tools(sid)).tools.map((t) => [t.name, t.permission_class])).toEqual([["calculator", "safe"]]);

    const accepted = await client.submitTurn(sid, "what is 6 * 7?");
    expect(accepted).toMatchObject({ turn_id: expect.any(String), status: "accepted" });
    const end = await client.waitForTurn(sid, accepted.turn_id);
    expect(end).toMatchObject({ type: "turn.completed", turn_id: accepted.turn_id });

    const page = await client.eventsPage(sid, { after: 0, limit: 3 });
    expect(page.events.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(page).toMatchObject({ next_after: 3, has_more: true });
    const log = await fullLog(client, sid);
    expect(log.at(-1)).toEqual(end);

    const tree = await client.tree(sid, accepted.turn_id);
    expect(tree.version).toBe(1);
    expect(tree.nodes.map((n) => [n.name, n.result_preview, n.is_error])).toEqual([["calculator", "42", false]]);

    const thread = await client.getThread(sid);
    expect(thread).toMatchObject({ status: "idle", active_turn_id: null, last_sequence: log.length });
    expect(await client.interrupt(sid)).toEqual({ interrupted: false, turn_id: null });

    // Idempotent submission: the same key and body give the same turn.
    const again = await client.submitTurn(sid, { input: "hello", idempotency_key: "k-1" });
    expect(await client.submitTurn(sid, { input: "hello", idempotency_key: "k-1" })).toEqual({ ...again, duplicate: true });
    await client.waitForTurn(sid, again.turn_id);

    // Regenerate: the last turn is rolled back and its input answered again; an earlier one is 409.
    const redo = await client.regenerate(sid, again.turn_id);
    expect(redo).toMatchObject({ turn_id: expect.any(String), status: "accepted", rolled_back_turn_id: again.turn_id });
    expect(await client.waitForTurn(sid, redo.turn_id)).toMatchObject({ type: "turn.completed" });
    expect((await rejection(client.regenerate(sid, accepted.turn_id))).status).toBe(409);
    expect((await client.getSession(sid)).turns.map((t) => t.turn_id)).not.toContain(again.turn_id);

    expect(await client.deleteAgent(name)).toEqual({ deleted: true, name });
    expect((await rejection(client.getAgent(name))).status).toBe(404);
  });

  it("queue control, live injection and interrupt on a running turn", async () => {
    const { client } = harness();
    const sid = await scriptedSession(client, [{ text: "working", hang: true }, { text: "second" }, { text: "third" }, { text: "fourth" }]);
    const first = await client.submitTurn(sid, "one");
    const second = await client.submitTurn(sid, "two");
    const third = await client.submitTurn(sid, "three");
    expect([second.status, third.status]).toEqual(["queued", "queued"]);
    expect(await client.promoteQueued(sid, third.turn_id)).toEqual({ queued: [third.turn_id, second.turn_id] });
    expect(await client.removeQueued(sid, second.turn_id)).toEqual({ queued: [third.turn_id] });
    expect((await rejection(client.removeQueued(sid, second.turn_id))).status).toBe(409);

    // Wait for the first turn's model call, then inject into it and interrupt it.
    await collect(client.events(sid), (e) => e.type === "model.delta");
    const injected = await client.inject(sid, "also this");
    expect(injected).toMatchObject({ delivery: "injected", turn_id: first.turn_id, message_id: expect.any(String) });
    expect(await client.interrupt(sid, "enough")).toEqual({ interrupted: true, turn_id: first.turn_id });
    expect(await client.waitForTurn(sid, first.turn_id)).toMatchObject({ type: "turn.cancelled", payload: { reason: "enough" } });
    expect(await client.waitForTurn(sid, third.turn_id)).toMatchObject({ type: "turn.completed" });
    const idle = await client.injectMessage(sid, "a new turn");
    expect(idle).toMatchObject({ delivery: "new_turn", turn_id: expect.any(String), status: "accepted" });
    await client.waitForTurn(sid, idle.turn_id);
    await fullLog(client, sid);
  });

  it("reads a spilled artifact", async () => {
    const { client } = harness();
    const sid = await scriptedSession(client, [{ tool_calls: [{ name: "echo", arguments: { blob: "y".repeat(60_000) } }] }, { text: "ok" }], {
      http_tools: [{ name: "echo", url: toolURL("echo") }],
    });
    const { turn_id } = await client.submitTurn(sid, "go");
    await client.waitForTurn(sid, turn_id);
    const spilled = (await fullLog(client, sid)).find((e) => e.type === "output.spilled")!;
    const art = await client.artifact(sid, spilled.payload.artifact_id as string);
    expect(art.contentType).toMatch(/json/);
    expect(art.bytes.byteLength).toBe(spilled.payload.bytes);
    expect(JSON.parse(art.text()).received.args.blob).toHaveLength(60_000);
  });

  it("files: uploads bytes and a Blob, lists, downloads a range, sends file parts in a turn, deletes; refusals are RuntimeErrors", async () => {
    const { client } = harness();
    const sid = await scriptedSession(client, [{ text: "a dot" }]);
    const png = await tinyPng(3);
    const image = await client.uploadFile(sid, png, { mediaType: "image/png", filename: "dot.png" });
    expect(image).toMatchObject({ media_type: "image/png", size: png.length, filename: "dot.png" });
    const notes = await client.uploadFile(sid, new Blob(["meeting at 3 pm"], { type: "text/plain" }));
    expect(notes).toMatchObject({ media_type: "text/plain", size: 15, filename: null });
    expect((await client.listFiles(sid)).files.map((f) => f.file_id)).toEqual([image.file_id, notes.file_id]);

    const whole = await client.downloadFile(sid, image.file_id);
    expect(whole).toMatchObject({ status: 200, contentType: "image/png", contentDisposition: "inline; filename=\"dot.png\"; filename*=UTF-8''dot.png" });
    expect(whole.bytes).toEqual(png);
    const part = await client.downloadFile(sid, notes.file_id, { range: { start: 11 } });
    expect([part.status, part.text(), part.contentRange]).toEqual([206, "3 pm", "bytes 11-14/15"]);

    const { turn_id } = await client.submitTurn(sid, [
      { type: "text", text: "What is this?" },
      { type: "file", file_id: image.file_id },
    ]);
    await client.waitForTurn(sid, turn_id);
    const model = (await client.getSession(sid)).agent.model;
    const [request] = await requests(model.slice(model.indexOf(":") + 1));
    const user = request.messages.find((m: any) => m.role === "user");
    expect(user.content[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(png)}` } });

    await client.deleteFile(sid, notes.file_id);
    expect((await client.listFiles(sid)).files.map((f) => f.file_id)).toEqual([image.file_id]);
    expect(await rejection(client.downloadFile(sid, notes.file_id))).toMatchObject({ status: 404, code: "not_found" });
    expect(await rejection(client.uploadFile(sid, new Uint8Array([1, 2]), { mediaType: "application/zip" }))).toMatchObject({
      status: 415,
      code: "unsupported_media_type",
    });
    expect(() => client.uploadFile(sid, new Uint8Array([1]))).toThrow(/mediaType/);
  });
});

describe("errors", () => {
  it("maps the error envelope: 401, 404, 409 and 422 with its field details", async () => {
    const bad = harness({ key: "wrong-key" }).client;
    const e401 = await rejection(bad.listAgents());
    expect(e401).toMatchObject({ status: 401, code: "unauthorized", name: "RuntimeError", retryable: false });

    const { client } = harness();
    const e404 = await rejection(client.getSession("ses_00000000000000000000000000"));
    expect(e404).toMatchObject({ status: 404, code: "not_found" });
    expect(e404.message).toMatch(/not found/);

    const e422 = await rejection(client.putAgent("bad", { model: "demo:x", temperature: 5, max_steps: 0 }));
    expect(e422).toMatchObject({ status: 422, code: "validation_failed" });
    expect(e422.fieldIssues.map((i) => i.path).sort()).toEqual(["max_steps", "temperature"]);
    expect(e422.details).toEqual(e422.fieldIssues);

    const e422inline = await rejection(client.createSession({ agent: { name: "x", model: "nope" } }));
    expect(e422inline.fieldIssues[0]!.path).toBe("agent.model");

    const sid = (await client.createSession({ agent: { name: "x", model: "demo:fast" } })).session_id;
    const e422empty = await rejection(client.submitTurn(sid, ""));
    expect(e422empty.fieldIssues).toEqual([{ path: "input", reason: expect.any(String) }]);
    expect((await rejection(client.respondAction(sid, "act_nope", "approve"))).status).toBe(404);
  });

  it("submitAndWait without any WebSocket refuses before submitting, so no turn is left waiting", async () => {
    const global = globalThis as { WebSocket?: unknown };
    const saved = global.WebSocket;
    global.WebSocket = undefined; // as on Node 20 without --experimental-websocket
    try {
      const client = new RuntimeClient({ url: BASE, key: KEY, fetch: declaredFetch });
      const sid = (await client.createSession({ agent: { name: "no-ws", model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] } })).session_id;
      await expect(client.submitAndWait(sid, "what is 1 + 1?")).rejects.toThrow(/no WebSocket available/);
      expect((await client.getSession(sid)).turn_count).toBe(0);
    } finally {
      global.WebSocket = saved;
    }
  });

  it("a network failure is a RuntimeError with status 0; a non-JSON error body keeps a snippet", async () => {
    const down = new RuntimeClient({ url: BASE, key: KEY, fetch: async () => Promise.reject(new TypeError("fetch failed")) });
    const err = await rejection(down.listAgents());
    expect(err).toMatchObject({ status: 0, code: "network_error", retryable: true });
    expect(err.message).toContain("fetch failed");

    const proxy = new RuntimeClient({ url: BASE, key: KEY, fetch: async () => new Response("<html>Bad gateway</html>", { status: 502 }) });
    expect(await rejection(proxy.listAgents())).toMatchObject({
      status: 502,
      code: "http_502",
      retryable: true,
      message: "HTTP 502: <html>Bad gateway</html>",
    });
  });
});

describe("events()", () => {
  it("yields every event exactly once, in order, while the connection is dropped mid-turn several times", async () => {
    // Each connection must ask for exactly the events after the last one the consumer got.
    let lastSeen = 0;
    const resumes: [string | null, number][] = [];
    const { client, sockets, urls } = harness({ onConnect: (url) => resumes.push([new URL(url).searchParams.get("after"), lastSeen]) });
    const sid = await scriptedSession(
      client,
      [{ text: "Let me compute.", tool_calls: [{ name: "calculator", arguments: { expression: "2 + 2" } }] }, slowText(160)],
      {
        tools: ["calculator"],
      },
    );
    const { turn_id } = await client.submitTurn(sid, "go");
    const dropAt = new Set([4, 11, 19, 30, 45]);
    const statuses: StreamStatus[] = [];
    const seen = await collect(client.events(sid, { onStatus: (s) => statuses.push(s) }), (e) => {
      lastSeen = e.sequence;
      if (dropAt.has(e.sequence)) sockets.at(-1)!.drop();
      return e.turn_id === turn_id && isEnd(e);
    });
    const log = await fullLog(client, sid);
    expect(seen.at(-1)!.type).toBe("turn.completed");
    expect(seen.map((e) => e.sequence)).toEqual(log.map((e) => e.sequence));
    expect(seen.map((e) => e.event_id)).toEqual(log.map((e) => e.event_id));
    expect(seen).toEqual(log);
    // Each drop made a new connection, which resumed from the last sequence yielded. (Frames that reached the
    // client before a drop are still handed over, so under load a resume can be a little past the drop point.)
    expect(sockets.length).toBeGreaterThanOrEqual(4);
    expect(resumes.map(([after, last]) => [Number(after), last])).toEqual(resumes.map(([, last]) => [last, last]));
    expect(resumes[0]).toEqual(["0", 0]);
    expect(urls.every((u) => new URL(u).searchParams.get("access_token") === KEY)).toBe(true);
    // The drops happened while the turn was still producing events.
    expect(Math.max(...dropAt)).toBeLessThan(log.length - 5);
    expect(statuses.filter((s) => s.type === "closed")).toHaveLength(sockets.length - 1);
  });

  it("survives drops at arbitrary moments (a timer, not the consumer, cuts the socket)", async () => {
    const { client, sockets } = harness();
    const sid = await scriptedSession(client, [slowText(300)]);
    const { turn_id } = await client.submitTurn(sid, "go");
    const cutter = setInterval(() => sockets.at(-1)?.drop(), 60);
    let seen: RuntimeEvent[];
    try {
      seen = await collect(client.events(sid), (e) => e.turn_id === turn_id && isEnd(e));
    } finally {
      clearInterval(cutter);
    }
    expect(seen).toEqual(await fullLog(client, sid));
    expect(sockets.length).toBeGreaterThanOrEqual(4);
  });

  it("repairs a gap from GET .../events before yielding anything newer, and drops a duplicate", async () => {
    const { client, sid, log } = await finishedSession();
    const { client: c2 } = harness({
      // The first socket skips events 5 and 6 and repeats event 9.
      filter: (f, _s, i) => (i === 0 && (f.sequence === 5 || f.sequence === 6) ? [] : i === 0 && f.sequence === 9 ? [f, f] : [f]),
    });
    void client;
    const statuses: StreamStatus[] = [];
    const seen = await collect(c2.events(sid, { onStatus: (s) => statuses.push(s) }), (_e, all) => all.length === log.length);
    expect(seen).toEqual(log);
    expect(statuses.filter((s) => ["gap", "repaired", "duplicate"].includes(s.type))).toEqual([
      { type: "gap", expected: 5, received: 7 },
      { type: "repaired", from: 5, to: 6 },
      { type: "duplicate", sequence: 9 },
    ]);
  });

  it("repairs a gap in the live stream (frames skipped while a turn runs)", async () => {
    const { client, sockets } = harness({ filter: (f, _s, i) => (i === 0 && f.type === "model.delta" && f.sequence % 3 === 0 ? [] : [f]) });
    const sid = await scriptedSession(client, [slowText(80)]);
    const { turn_id } = await client.submitTurn(sid, "go");
    const statuses: StreamStatus[] = [];
    const seen = await collect(client.events(sid, { onStatus: (s) => statuses.push(s) }), (e) => e.turn_id === turn_id && isEnd(e));
    expect(seen).toEqual(await fullLog(client, sid));
    expect(sockets).toHaveLength(1);
    expect(statuses.filter((s) => s.type === "gap").length).toBeGreaterThan(3);
  });

  it("resumes after the session object restarts mid-turn", async () => {
    const { client, sockets } = harness();
    const sid = await scriptedSession(client, [slowText(200), { text: "after the restart" }]);
    const { turn_id } = await client.submitTurn(sid, "go");
    let restarted = false;
    const statuses: StreamStatus[] = [];
    const seen = await collect(client.events(sid, { onStatus: (s) => statuses.push(s) }), async (e) => {
      if (!restarted && e.type === "model.delta") {
        restarted = true;
        await abortAllDurableObjects();
      }
      return e.turn_id === turn_id && isEnd(e);
    });
    const log = await fullLog(client, sid);
    expect(seen).toEqual(log);
    expect(log.some((e) => e.type === "run.status" && e.payload.phase === "recovering")).toBe(true);
    expect(seen.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "after the restart" } });
    // The restart closed the socket; the client reconnected from where it was.
    expect(sockets.length).toBeGreaterThanOrEqual(2);
    expect(statuses.find((s) => s.type === "closed")).toMatchObject({ code: 1006 });
  });

  it("replaces a socket that went silent while the log moved on (a half-open connection)", async () => {
    // The first socket stops delivering anything after event 8, without closing.
    const { client, sockets } = harness({ filter: (f, _s, i) => (i === 0 && f.sequence > 8 ? [] : [f]) });
    const sid = await scriptedSession(client, [slowText(60)]);
    const { turn_id } = await client.submitTurn(sid, "go");
    const statuses: StreamStatus[] = [];
    const seen = await collect(client.events(sid, { staleAfterMs: 150, onStatus: (s) => statuses.push(s) }), (e) => e.turn_id === turn_id && isEnd(e));
    expect(seen).toEqual(await fullLog(client, sid));
    expect(statuses).toContainEqual({ type: "stale", last: 8 });
    expect(sockets).toHaveLength(2);
  });

  it("acks on a named channel; a later iterator on that channel resumes after the last event handed over", async () => {
    const { client, sid, log } = await finishedSession();
    const h = harness();
    const first = await collect(h.client.events(sid, { channel: "phone" }), (e) => e.sequence === 6);
    expect(first.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(h.sockets[0]!.sent.filter((f) => f.type === "ack").at(-1)).toEqual({ type: "ack", sequence: 6 });
    await until(async () => (await client.getSession(sid)).channels.find((c) => c.channel_id === "phone")?.acked_sequence === 6);

    const rest = await collect(h.client.events(sid, { channel: "phone" }), (_e, all) => all.length === log.length - 6);
    expect(rest).toEqual(log.slice(6));
    expect(new URL(h.urls.at(-1)!).searchParams.get("after")).toBe("6");
  });

  it("a slow consumer on a channel, closed by the server (4008), resumes and still sees every event once", async () => {
    // The test deployment closes channel sockets whose acks lag more than 300 events (WS_MAX_UNACKED_EVENTS).
    const { client, sockets } = harness();
    const sid = await scriptedSession(client, [{ text: "z".repeat(400), chunk_size: 1, delay_ms: 1 }]);
    const statuses: StreamStatus[] = [];
    // Connected before the turn starts, so its events arrive live (the server measures the lag on live events).
    let turnId = "";
    const consuming = collect(client.events(sid, { channel: "slow", onStatus: (s) => statuses.push(s) }), async (e) => {
      // The consumer stalls on event 5 (so nothing more is acked) until the server gives up on the socket.
      if (e.sequence === 5) await until(async () => sockets[0]!.readyState === 3, 15_000);
      return e.turn_id === turnId && isEnd(e);
    });
    await until(async () => statuses.some((s) => s.type === "open"));
    const { turn_id } = await client.submitTurn(sid, "stream a lot");
    turnId = turn_id;
    const seen = await consuming;
    expect(seen).toEqual(await fullLog(client, sid));
    expect(statuses.filter((s) => s.type === "closed").map((s) => (s as { code: number }).code)).toContain(4008);
    expect(sockets.length).toBeGreaterThanOrEqual(2);
  });

  it("surfaces 401 and 404 without retrying; retries a connection that fails while the route is fine", async () => {
    const { sid } = await finishedSession();
    const unauthorized = harness({ key: "wrong-key" });
    expect(await rejection(collect(unauthorized.client.events(sid), () => true))).toMatchObject({ status: 401, code: "unauthorized" });
    expect(unauthorized.urls).toHaveLength(1);

    // A WebSocket that hides the status (as in browsers): the client asks over HTTP what is wrong.
    const hidden = harness({ hideStatus: true });
    expect(await rejection(collect(hidden.client.events("ses_00000000000000000000000000"), () => true))).toMatchObject({ status: 404, code: "not_found" });
    expect(hidden.urls).toHaveLength(1);
    const hiddenAuth = harness({ key: "wrong-key", hideStatus: true });
    expect(await rejection(collect(hiddenAuth.client.events(sid), () => true))).toMatchObject({ status: 401 });
    expect(hiddenAuth.urls).toHaveLength(1);
    expect(await rejection(collect(hidden.client.events(sid, { after: 10_000 }), () => true))).toMatchObject({ status: 422, code: "validation_failed" });

    // With a channel, the cursor lookup fails first, over HTTP.
    expect(await rejection(collect(unauthorized.client.events(sid, { channel: "c" }), () => true))).toMatchObject({ status: 401 });

    // Transient failures (the route answers fine over HTTP) are retried with backoff.
    const flaky = harness({ refuse: 3 });
    const statuses: StreamStatus[] = [];
    const seen = await collect(flaky.client.events(sid, { onStatus: (s) => statuses.push(s) }), (e) => e.sequence === 3);
    expect(seen.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(flaky.urls).toHaveLength(4);
    expect(statuses.filter((s) => s.type === "retry").map((s) => (s as { attempt: number }).attempt)).toEqual([1, 2, 3]);
    // ... and maxAttempts bounds them.
    const dead = harness({ refuse: 100 });
    await expect(collect(dead.client.events(sid, { maxAttempts: 3 }), () => true)).rejects.toThrow("WebSocket connection failed");
    expect(dead.urls).toHaveLength(3);
  });

  it("stops quietly when its signal aborts, closing the socket", async () => {
    const { sid, log } = await finishedSession();
    const h = harness();
    const stop = new AbortController();
    const seen = await collect(h.client.events(sid, { signal: stop.signal }), (e) => {
      if (e.sequence === log.length) setTimeout(() => stop.abort(), 20);
    });
    expect(seen).toEqual(log);
    expect(h.sockets[0]!.readyState).toBe(3);
  });
});

describe("submitAndWait", () => {
  it("answers an approval through the callback and returns the turn's terminal event", async () => {
    const { client } = harness();
    const sid = await scriptedSession(client, [{ text: "Deploying.", tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] }, { text: "Deployed." }], {
      http_tools: [DEPLOY],
      hitl_tools: ["deploy"],
    });
    const seen: RuntimeEvent[] = [];
    const asked: RuntimeEvent[] = [];
    const end = await client.submitAndWait(sid, "deploy to prod", {
      onEvent: (e) => void seen.push(e),
      onApproval: (e) => {
        asked.push(e);
        return "approve";
      },
    });
    expect(end).toMatchObject({ type: "turn.completed", payload: { output: "Deployed.", stop_reason: "final_answer" } });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.payload).toMatchObject({ kind: "tool_approval", tool_name: "deploy", args: { env: "prod" } });
    const types = seen.map((e) => e.type);
    expect(types.indexOf("action.required")).toBeLessThan(types.indexOf("action.resolved"));
    expect(types.indexOf("action.resolved")).toBeLessThan(types.indexOf("tool.started"));
    expect(seen.find((e) => e.type === "action.resolved")!.payload).toMatchObject({ decision: "approved", tool_name: "deploy" });
    expect(seen.find((e) => e.type === "tool.result")!.payload).toMatchObject({ is_error: false, output: { received: { args: { env: "prod" } } } });
    // Every event of the turn, and only those.
    const log = await fullLog(client, sid);
    expect(seen).toEqual(log.filter((e) => e.turn_id === end.turn_id));
  });

  it("a rejection with a reason is fed back to the model; no answer leaves the action pending", async () => {
    const { client } = harness();
    const sid = await scriptedSession(
      client,
      [
        { tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] },
        { text: "Not deploying." },
        { tool_calls: [{ name: "deploy", arguments: { env: "dev" } }] },
        { text: "ok" },
      ],
      { http_tools: [DEPLOY], hitl_tools: ["deploy"] },
    );
    const end = await client.submitAndWait(sid, "deploy", { onApproval: () => ({ decision: "reject", reason: "not on a Friday" }) });
    expect(end).toMatchObject({ type: "turn.completed", payload: { output: "Not deploying." } });
    const log = await fullLog(client, sid);
    expect(log.find((e) => e.type === "action.resolved")!.payload).toMatchObject({ decision: "rejected", reason: "not on a Friday" });

    // Without an answer the turn waits; a decision made elsewhere (here over HTTP) lets it finish.
    const waiting = client.submitAndWait(sid, "deploy dev", {
      onApproval: (e) => {
        setTimeout(() => void client.respondAction(sid, e.action_id!, "approve"), 50);
        return null;
      },
    });
    expect(await waiting).toMatchObject({ type: "turn.completed", payload: { output: "ok" } });
  });

  it("rejects with the signal's reason when aborted; the turn goes on", async () => {
    const { client } = harness();
    const sid = await scriptedSession(client, [{ text: "slow", hang: true }]);
    const stop = new AbortController();
    const waiting = client.submitAndWait(sid, "go", {
      signal: stop.signal,
      onEvent: (e) => void (e.type === "model.delta" && stop.abort(new Error("user gave up"))),
    });
    await expect(waiting).rejects.toThrow("user gave up");
    expect((await client.getThread(sid)).status).toBe("running");
    await client.interrupt(sid);
  });
});

/** A session with one finished turn (a tool call and streamed text), and its log. */
async function finishedSession(): Promise<{ client: RuntimeClient; sid: string; log: RuntimeEvent[] }> {
  const { client } = harness();
  const sid = await scriptedSession(
    client,
    [{ tool_calls: [{ name: "calculator", arguments: { expression: "1 + 1" } }] }, { text: "two, as it happens", chunk_size: 3 }],
    {
      tools: ["calculator"],
    },
  );
  const { turn_id } = await client.submitTurn(sid, "1 + 1?");
  await client.waitForTurn(sid, turn_id);
  const log = await fullLog(client, sid);
  expect(log.length).toBeGreaterThan(12);
  return { client, sid, log };
}

async function until(probe: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
