// Event delivery through the public surface: WebSocket replay-then-live,
// resume from a cursor, remote channels with acks, command frames, SSE, auth and errors, and sockets
// surviving a Durable Object eviction (hibernation).
import { env, evictDurableObject, runInDurableObject, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../../src/env";
import type { SessionObject } from "../../../src/session/object";
import { api, createSession, events, expectGapless, KEY, submitTurn, waitForTurnEnd } from "../../support/api";
import { type Step, script, uniqueId } from "../../support/fake-model";
import { shortLivedToken } from "../../support/tokens";
import { closeAllSockets, type EventEnvelope, openWs, TERMINAL_TYPES, until, wsFetch } from "../../support/ws";

const BASE = "https://runtime.test";

// ---- agents (inline configs, so every test owns its session and script) ----

const demoAgent = { name: "streams-demo", model: "demo:any", tools: ["calculator"] };

async function scriptedSession(steps: Step[], extra: Record<string, unknown> = {}): Promise<string> {
  const id = uniqueId("streams");
  await script(id, steps);
  return createSession({ name: "streams-scripted", model: `openai-compatible:${id}`, ...extra });
}

/** A text answer streamed in many small, slow chunks: the turn stays live for a while. */
function slowText(chars: number, delayMs = 4): Step {
  const text = Array.from({ length: chars }, (_, i) => String.fromCharCode(97 + (i % 26))).join("");
  return { text, chunk_size: 2, delay_ms: delayMs };
}

/** Starts a slow turn and returns once at least `minEvents` events are in the log (the turn still running). */
async function slowTurn(chars: number, minEvents: number): Promise<{ sid: string; turnId: string }> {
  const sid = await scriptedSession([slowText(chars)]);
  const { turn_id } = await submitTurn(sid, "stream slowly please");
  const log = await until(async () => {
    const l = await events(sid);
    return l.length >= minEvents && l;
  }, `${minEvents} events in the log`);
  expect(isEnded(log, turn_id), "the turn ended before the test could join it mid-turn").toBe(false);
  return { sid, turnId: turn_id };
}

function isEnded(log: { turn_id?: string | null; type: string }[], turnId: string): boolean {
  return log.some((e) => e.turn_id === turnId && TERMINAL_TYPES.includes(e.type));
}

/** Received events are exactly `expected`: same sequences in the same order, same envelopes. */
function expectSameEvents(received: EventEnvelope[], expected: EventEnvelope[]): void {
  expect(received.map((e) => e.sequence)).toEqual(expected.map((e) => e.sequence));
  expect(received).toEqual(expected);
}

function randomSessionId(): string {
  return `ses_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

function sessionStub(sid: string) {
  const ns = (env as unknown as Env).SESSIONS;
  return ns.get(ns.idFromName(sid));
}

// ---- SSE client ----

interface SseMessage {
  id: string | null;
  event: string | null;
  data: string;
}

const openSse = new Set<SseClient>();

class SseClient {
  readonly messages: SseMessage[] = [];
  ended = false;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(res: Response) {
    this.reader = res.body!.getReader();
    openSse.add(this);
    void this.pump();
  }

  /** The `data:` of every message, parsed. */
  get events(): EventEnvelope[] {
    return this.messages.map((m) => JSON.parse(m.data) as EventEnvelope);
  }

  waitForCount(n: number): Promise<EventEnvelope[]> {
    return until(() => this.messages.length >= n && this.events, `${n} SSE messages (have ${this.messages.length})`);
  }

  waitForTurnEnd(turnId: string): Promise<EventEnvelope> {
    return until(() => this.events.find((e) => e.turn_id === turnId && TERMINAL_TYPES.includes(e.type)), `the end of turn ${turnId} over SSE`);
  }

  async cancel(): Promise<void> {
    openSse.delete(this);
    await this.reader.cancel().catch(() => {});
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          // A block of comments only is a keep-alive, no message.
          if (block.split("\n").some((l) => l !== "" && !l.startsWith(":"))) this.messages.push(parseSseBlock(block));
        }
      }
    } catch {
      // cancelled
    } finally {
      this.ended = true;
    }
  }
}

function parseSseBlock(block: string): SseMessage {
  const msg: SseMessage = { id: null, event: null, data: "" };
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") msg.id = value;
    else if (field === "event") msg.event = value;
    else if (field === "data") data.push(value);
  }
  msg.data = data.join("\n");
  return msg;
}

function sseFetch(sid: string, query = "", headers: Record<string, string> = { authorization: `Bearer ${KEY}` }): Promise<Response> {
  return SELF.fetch(`${BASE}/v1/sessions/${sid}/events${query ? `?${query}` : ""}`, { headers: { accept: "text/event-stream", ...headers } });
}

async function sse(sid: string, query = "", headers?: Record<string, string>): Promise<SseClient> {
  const res = await sseFetch(sid, query, headers);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  return new SseClient(res);
}

afterEach(async () => {
  await closeAllSockets();
  await Promise.all([...openSse].map((s) => s.cancel()));
});

// ---- tests ----

describe("WebSocket: replay, then live", () => {
  it("replays a finished turn from cursor 0, then streams the next turn live with no gap or duplicate", async () => {
    const sid = await createSession(demoAgent);
    const first = await submitTurn(sid, "what is 2 * (3 + 4)?");
    const before = await waitForTurnEnd(sid, first.turn_id);
    expect(before.map((e) => e.type)).toContain("tool.result");

    const ws = await openWs(sid, "after=0");
    await ws.waitForCount(before.length);
    expectSameEvents(ws.events, before);
    expectGapless(ws.events);

    const second = await submitTurn(sid, "what is 6 * 7?");
    const end = await ws.waitForTurnEnd(second.turn_id);
    expect(end.type).toBe("turn.completed");
    expect(end.payload.output).toContain("42");

    const log = await events(sid);
    expectGapless(log);
    expectSameEvents(ws.events, log);
    expect(ws.replies).toEqual([]);
    expect(ws.other).toEqual([]);
    expect(ws.closed).toBeNull();
  });

  it("a socket opened mid-turn from cursor 0 gets every event exactly once through turn.completed; one opened from a mid-turn cursor gets exactly the rest", async () => {
    const { sid, turnId } = await slowTurn(400, 12);

    const fromStart = await openWs(sid, "after=0");
    // Join a second socket later in the same turn, from a cursor the first socket saw mid-turn.
    const seen = await fromStart.waitForCount(30);
    const cursor = seen.at(-1)!.sequence;
    expect(isEnded(seen, turnId), "the turn ended before the second socket joined").toBe(false);
    const fromCursor = await openWs(sid, `after=${cursor}`);

    expect((await fromStart.waitForTurnEnd(turnId)).type).toBe("turn.completed");
    expect((await fromCursor.waitForTurnEnd(turnId)).type).toBe("turn.completed");

    const log = await events(sid);
    expectGapless(log);
    expect(log.filter((e) => e.type === "model.delta").length).toBe(200); // 400 characters in 2-character chunks
    expectSameEvents(fromStart.events, log);
    expect(fromCursor.events[0]!.sequence).toBe(cursor + 1);
    expectSameEvents(fromCursor.events, log.slice(cursor));
  });

  it("replays spanning many pages join the live stream without gap or duplicate (WebSocket and SSE)", async () => {
    // A long finished turn (many replay pages of 256), then a slow live turn: sockets that join during the
    // live turn replay page after page while new events keep being appended between the pages.
    const sid = await scriptedSession([{ ...slowText(2400), delay_ms: 0 }, slowText(600, 2)]);
    const first = await submitTurn(sid, "a long answer");
    await waitForTurnEnd(sid, first.turn_id, 20_000);
    const second = await submitTurn(sid, "and another, slowly");
    await until(async () => (await events(sid)).some((e) => e.turn_id === second.turn_id && e.type === "model.delta"), "the live turn to stream");

    const [sockets, streams] = await Promise.all([
      Promise.all([openWs(sid, "after=0"), openWs(sid, "after=0"), openWs(sid, "after=1"), openWs(sid, "after=0&frames=batch")]),
      Promise.all([sse(sid, "after=0"), sse(sid, "after=0")]),
    ]);
    for (const ws of sockets) await ws.waitForTurnEnd(second.turn_id);
    for (const stream of streams) await stream.waitForTurnEnd(second.turn_id);

    const log = await events(sid);
    expectGapless(log);
    expect(log.length).toBeGreaterThan(1500);
    expectSameEvents(sockets[0]!.events, log);
    expectSameEvents(sockets[1]!.events, log);
    expectSameEvents(sockets[2]!.events, log.slice(1));
    for (const stream of streams) expectSameEvents(stream.events, log);
    // frames=batch: the same events, a replay page or a commit's events to a frame.
    expectSameEvents(sockets[3]!.events, log);
    expect(sockets[0]!.eventFrames.length).toBe(log.length);
    expect(sockets[3]!.eventFrames.length).toBeLessThan(log.length / 2);
    expect(Math.max(...sockets[3]!.eventFrames)).toBe(256);
  });

  it("frames=batch sends the events committed together as one frame, an array; another value of frames is 422", async () => {
    const sid = await scriptedSession(
      [
        {
          tool_calls: [
            { name: "calculator", arguments: { expression: "1+1" } },
            { name: "calculator", arguments: { expression: "2+2" } },
          ],
        },
        { text: "done" },
      ],
      {
        tools: ["calculator"],
      },
    );
    const batched = await openWs(sid, "frames=batch");
    const single = await openWs(sid);
    const { turn_id } = await submitTurn(sid, "add");
    await batched.waitForTurnEnd(turn_id);
    await single.waitForTurnEnd(turn_id);
    const log = await events(sid);
    expectSameEvents(batched.events, log);
    expectSameEvents(single.events, log);
    expect(batched.other).toEqual([]);
    // The two calls start in one commit: their tool.started events share a frame.
    expect(Math.max(...batched.eventFrames)).toBeGreaterThan(1);
    expect(batched.eventFrames.length).toBeLessThan(single.eventFrames.length);
    const bad = await wsFetch(sid, "frames=many");
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain("frames");
  });

  it("drop and resume: the events before the drop plus a reconnect from the last one seen are exactly the log", async () => {
    const { sid, turnId } = await slowTurn(400, 8);

    const ws = await openWs(sid, "after=0");
    await ws.waitForCount(25);
    const beforeDrop = [...ws.events];
    await ws.close();
    expect(isEnded(beforeDrop, turnId), "the turn ended before the drop").toBe(false);
    const last = beforeDrop.at(-1)!.sequence;

    const resumed = await openWs(sid, `after=${last}`);
    expect((await resumed.waitForTurnEnd(turnId)).type).toBe("turn.completed");
    expect(resumed.events[0]!.sequence).toBe(last + 1);

    const log = await events(sid);
    expectGapless(log);
    expectSameEvents([...beforeDrop, ...resumed.events], log);
  });
});

describe("text deltas", () => {
  it("every chunk is its own model.delta, in order, delivered while the model is still streaming (batched commits do not hold them back)", async () => {
    const text = "abcdefghijklmnopqrstuvwxyz0123456789";
    // 12 chunks arrive at once, then the stream stalls without finishing.
    const sid = await scriptedSession([{ text, chunk_size: 3, stall_after: 12 }]);
    const ws = await openWs(sid);
    const { turn_id } = await submitTurn(sid, "stream, then stall");
    const ofTurn = () => ws.events.filter((e) => e.turn_id === turn_id);
    const deltas = await until(() => {
      const d = ofTurn().filter((e) => e.type === "model.delta");
      return d.length === 12 && d;
    }, "all 12 deltas while the model stalls");
    expect(deltas.map((e) => e.payload.text).join("")).toBe(text);
    expect(ofTurn().map((e) => e.type)).not.toContain("model.completed");

    const stopped = await api("POST", `/v1/sessions/${sid}/interrupt`, { reason: "enough" });
    expect(stopped.body).toEqual({ interrupted: true, turn_id });
    expect((await ws.waitForTurnEnd(turn_id)).type).toBe("turn.cancelled");
    const log = await events(sid);
    expectGapless(log);
    expectSameEvents(ws.events, log);
  });
});

describe("WebSocket: remote channels", () => {
  it("closes a channel socket whose acks fall too far behind (4008); it resumes from its channel cursor", async () => {
    // The test deployment sets WS_MAX_UNACKED_EVENTS to 300 (vitest.config.ts).
    const sid = await scriptedSession([{ text: "z".repeat(400), chunk_size: 1, delay_ms: 2 }]);
    const lagging = await openWs(sid, "channel=lag");
    const acking = await openWs(sid, "channel=keeps-up");
    const { turn_id } = await submitTurn(sid, "stream a lot");
    // One client acks as it goes; the other never does.
    const pump = setInterval(() => acking.send({ type: "ack", sequence: acking.lastSequence }), 5);
    try {
      await until(() => lagging.closed, "the lagging socket to be closed");
      await acking.waitForTurnEnd(turn_id);
    } finally {
      clearInterval(pump);
    }
    expect(lagging.closed!.code).toBe(4008);
    expect(lagging.closed!.reason).toContain("slow consumer");
    expect(acking.closed).toBeNull();
    const log = await events(sid);
    expectSameEvents(acking.events, log);
    // Reconnecting on the channel picks up after its last ack (none: from the start) and gets everything.
    const again = await openWs(sid, "channel=lag");
    await again.waitForCount(log.length);
    expectSameEvents(again.events, log);
  });

  it("keeps a channel's acked sequence and resumes a reconnect without `after` right after it", async () => {
    const sid = await createSession(demoAgent);
    const { turn_id } = await submitTurn(sid, "what is 2 * (3 + 4)?");
    const log = await waitForTurnEnd(sid, turn_id);
    const acked = log.length - 4;

    const first = await openWs(sid, "channel=c1");
    // A new channel without `after` starts at the beginning of the log.
    await first.waitForCount(log.length);
    expectSameEvents(first.events, log);
    first.send({ type: "ack", sequence: acked });
    // Acks are not answered; the snapshot shows when this one is stored.
    const channels = await until(async () => {
      const snap = await api("GET", `/v1/sessions/${sid}`);
      const c1 = (snap.body.channels as { channel_id: string; acked_sequence: number }[]).find((c) => c.channel_id === "c1");
      return c1?.acked_sequence === acked && snap.body.channels;
    }, `channel c1 acked at ${acked}`);
    expect(channels).toEqual([expect.objectContaining({ channel_id: "c1", acked_sequence: acked })]);
    // An older ack never moves the cursor back; a request_id asks for a confirmation.
    first.send({ type: "ack", sequence: 1, request_id: "ack-1" });
    const confirmed = await first.waitForReply("ack-1");
    expect(confirmed).toMatchObject({ ok: true, result: { channel: "c1", acked_sequence: acked } });
    await first.close();

    const again = await openWs(sid, "channel=c1");
    await again.waitForCount(log.length - acked);
    expect(again.events[0]!.sequence).toBe(acked + 1);
    expectSameEvents(again.events, log.slice(acked));

    const snap = await api("GET", `/v1/sessions/${sid}`);
    expect(snap.status).toBe(200);
    expect(snap.body.channels).toEqual([expect.objectContaining({ channel_id: "c1", acked_sequence: acked })]);

    // An explicit `after` overrides the channel's cursor.
    const explicit = await openWs(sid, "channel=c1&after=2");
    await explicit.waitForCount(log.length - 2);
    expectSameEvents(explicit.events, log.slice(2));
  });
});

describe("WebSocket: command frames", () => {
  it("submit_turn is answered with the turn id and the turn's events arrive on the same socket", async () => {
    const sid = await createSession(demoAgent);
    const ws = await openWs(sid);
    await ws.waitForCount(1); // session.created

    const reply = await ws.command({ type: "submit_turn", input: "what is 2 * (3 + 4)?", request_id: "r-1", idempotency_key: "k-1" });
    expect(reply).toEqual({ type: "reply", request_id: "r-1", ok: true, result: { turn_id: expect.any(String), status: "accepted" } });
    const turnId = reply.result.turn_id as string;

    const end = await ws.waitForTurnEnd(turnId);
    expect(end.type).toBe("turn.completed");
    expect(end.payload.output).toContain("14");
    const mine = ws.events.filter((e) => e.turn_id === turnId).map((e) => e.type);
    expect(mine[0]).toBe("turn.submitted");
    expect(mine).toEqual(expect.arrayContaining(["turn.started", "tool.started", "tool.result", "turn.completed"]));

    // The same idempotency key and body names the same turn; nothing new is logged.
    const repeat = await ws.command({ type: "submit_turn", input: "what is 2 * (3 + 4)?", request_id: 7, idempotency_key: "k-1" });
    expect(repeat).toMatchObject({ type: "reply", request_id: 7, ok: true, result: { turn_id: turnId } });

    const log = await events(sid);
    expectGapless(log);
    expectSameEvents(ws.events, log);
  });

  it("answers malformed frames with ok:false and keeps the socket open", async () => {
    const sid = await createSession(demoAgent);
    const ws = await openWs(sid);
    await ws.waitForCount(1);

    ws.send("this is not json {");
    const notJson = await ws.waitForReply(null);
    expect(notJson).toMatchObject({ type: "reply", ok: false, error: { code: "malformed_body", message: expect.any(String) } });
    expect(notJson).not.toHaveProperty("sequence");

    const unknown = await ws.command({ type: "launch_rockets", request_id: "u-1" });
    expect(unknown).toMatchObject({ type: "reply", request_id: "u-1", ok: false, error: { code: "validation_failed", message: expect.any(String) } });

    const missing = await ws.command({ type: "submit_turn", request_id: "m-1" });
    expect(missing).toMatchObject({ type: "reply", request_id: "m-1", ok: false, error: { code: "validation_failed" } });
    expect(missing.error!.message).toContain("input");

    const badDecision = await ws.command({ type: "respond_action", action_id: "act_1", decision: "maybe", request_id: "d-1" });
    expect(badDecision).toMatchObject({ ok: false, error: { code: "validation_failed" } });

    // A malformed frame changed nothing: no turn was submitted.
    expect((await events(sid)).map((e) => e.type)).toEqual(["session.created"]);
    expect(ws.closed).toBeNull();

    // The socket still works.
    const ok = await ws.command({ type: "submit_turn", input: "what is 1 + 1?", request_id: "ok-1" });
    expect(ok).toMatchObject({ request_id: "ok-1", ok: true, result: { status: "accepted" } });
    expect((await ws.waitForTurnEnd(ok.result.turn_id)).type).toBe("turn.completed");
    expect(ws.closed).toBeNull();
    expectSameEvents(ws.events, await events(sid));
  });

  it("ack on a socket without a channel is answered with ok:false", async () => {
    const sid = await createSession(demoAgent);
    const ws = await openWs(sid);
    await ws.waitForCount(1);
    ws.send({ type: "ack", sequence: 1 });
    const reply = await ws.waitForReply(null);
    expect(reply).toMatchObject({ type: "reply", ok: false, error: { code: "validation_failed" } });
    expect(ws.closed).toBeNull();
    expect((await api("GET", `/v1/sessions/${sid}`)).body.channels).toEqual([]);
  });

  it("interrupt during a hanging model call ends the turn with turn.cancelled and replies ok", async () => {
    const sid = await scriptedSession([{ text: "partial answer that never ends", chunk_size: 8, hang: true }, { text: "fresh answer" }]);
    const ws = await openWs(sid);

    const submitted = await ws.command({ type: "submit_turn", input: "hang please", request_id: "s-1" });
    expect(submitted.ok).toBe(true);
    const turnId = submitted.result.turn_id as string;
    // The hanging stream delivered its first chunk: the model call is in flight.
    await ws.waitForEvent((e) => e.turn_id === turnId && e.type === "model.delta", "the first model.delta");

    const reply = await ws.command({ type: "interrupt", reason: "user pressed stop", request_id: "i-1" });
    expect(reply).toEqual({ type: "reply", request_id: "i-1", ok: true, result: { interrupted: true, turn_id: turnId } });
    const end = await ws.waitForTurnEnd(turnId);
    expect(end.type).toBe("turn.cancelled");
    expect(end.payload.reason).toBe("user pressed stop");

    const thread = await api("GET", `/v1/sessions/${sid}/thread`);
    expect(thread.body).toMatchObject({ status: "idle", active_turn_id: null });

    // Nothing is left running: a second interrupt is a no-op, and the next turn runs normally.
    const noop = await ws.command({ type: "interrupt", request_id: "i-2" });
    expect(noop).toMatchObject({ ok: true, result: { interrupted: false, turn_id: null } });
    const next = await ws.command({ type: "submit_turn", input: "again", request_id: "s-2" });
    const nextEnd = await ws.waitForTurnEnd(next.result.turn_id);
    expect(nextEnd).toMatchObject({ type: "turn.completed", payload: { output: "fresh answer" } });

    // The aborted model call wrote nothing after the cancellation.
    const log = await events(sid);
    expectGapless(log);
    const cancelledAt = log.findIndex((e) => e.type === "turn.cancelled");
    expect(log.slice(cancelledAt + 1).filter((e) => e.turn_id === turnId)).toEqual([]);
    expectSameEvents(ws.events, log);
  });

  it("respond_action for an unknown action replies ok:false with not_found", async () => {
    const sid = await createSession(demoAgent);
    const ws = await openWs(sid);
    const reply = await ws.command({ type: "respond_action", action_id: "act_does_not_exist", decision: "approve", request_id: "a-1" });
    expect(reply).toMatchObject({ type: "reply", request_id: "a-1", ok: false, error: { code: "not_found", message: expect.any(String) } });
    expect(ws.closed).toBeNull();
  });
});

describe("stream routes: auth and errors", () => {
  it("the WebSocket route needs a key: Bearer header or ?access_token=, else 401 JSON", async () => {
    const sid = await createSession(demoAgent);

    const none = await wsFetch(sid, "", {});
    expect(none.status).toBe(401);
    expect(none.webSocket).toBeNull();
    expect(none.headers.get("content-type")).toContain("application/json");
    expect(await none.json()).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });

    const wrong = await wsFetch(sid, "access_token=not-a-key", {});
    expect(wrong.status).toBe(401);
    await wrong.text();

    const ws = await openWs(sid, `access_token=${KEY}`, {});
    const [created] = await ws.waitForCount(1);
    expect(created!.type).toBe("session.created");
  });

  it("access_token is accepted on SSE but not on the JSON events route", async () => {
    const sid = await createSession(demoAgent);

    const json = await api("GET", `/v1/sessions/${sid}/events?access_token=${KEY}`, undefined, { authorization: "" });
    expect(json.status).toBe(401);
    expect(json.body).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });

    const noKey = await sseFetch(sid, "", {});
    expect(noKey.status).toBe(401);
    await noKey.text();

    const stream = await sse(sid, `access_token=${KEY}`, {});
    const [created] = await stream.waitForCount(1);
    expect(created!.type).toBe("session.created");
  });

  it("a GET to /ws without Upgrade is 426 with the error envelope", async () => {
    const sid = await createSession(demoAgent);
    const res = await api("GET", `/v1/sessions/${sid}/ws`);
    expect(res.status).toBe(426);
    expect(res.body).toEqual({ error: { code: "upgrade_required", message: expect.any(String) } });
  });

  it("a cursor beyond the last sequence is 422 on every delivery route; a bad cursor is 422 too", async () => {
    const sid = await createSession(demoAgent);
    const last = (await events(sid)).length;

    const ws = await wsFetch(sid, `after=${last + 1}`);
    expect(ws.status).toBe(422);
    expect(ws.webSocket).toBeNull();
    const body = (await ws.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe("validation_failed");
    expect(body.error.details.map((d) => d.path)).toContain("after");

    const json = await api("GET", `/v1/sessions/${sid}/events?after=${last + 1}`);
    expect(json.status).toBe(422);
    expect(json.body.error.code).toBe("validation_failed");

    const stream = await sseFetch(sid, `after=${last + 1}`);
    expect(stream.status).toBe(422);
    expect(((await stream.json()) as { error: { code: string } }).error.code).toBe("validation_failed");

    const lastEventId = await sseFetch(sid, "", { authorization: `Bearer ${KEY}`, "last-event-id": String(last + 5) });
    expect(lastEventId.status).toBe(422);
    await lastEventId.text();

    for (const bad of ["-1", "abc", "1.5"]) {
      const res = await wsFetch(sid, `after=${bad}`);
      expect(res.status, `after=${bad}`).toBe(422);
      await res.text();
    }

    // The cursor equal to the last sequence is fine: nothing to replay, live from here.
    const atHead = await openWs(sid, `after=${last}`);
    const { turn_id } = await submitTurn(sid, "what is 3 * 3?");
    await atHead.waitForTurnEnd(turn_id);
    expect(atHead.events[0]!.sequence).toBe(last + 1);
    expectSameEvents(atHead.events, (await events(sid)).slice(last));
  });

  it("an unknown session is 404 on every delivery route", async () => {
    for (const sid of [randomSessionId(), "not-a-session"]) {
      const ws = await wsFetch(sid);
      expect(ws.status, `ws ${sid}`).toBe(404);
      expect(((await ws.json()) as { error: { code: string } }).error.code).toBe("not_found");

      const json = await api("GET", `/v1/sessions/${sid}/events`);
      expect(json.status, `events ${sid}`).toBe(404);
      expect(json.body.error.code).toBe("not_found");

      const stream = await sseFetch(sid);
      expect(stream.status, `sse ${sid}`).toBe(404);
      expect(((await stream.json()) as { error: { code: string } }).error.code).toBe("not_found");
    }
  });
});

describe("SSE", () => {
  it("streams events after the cursor with id = sequence and event = type, then a new turn live", async () => {
    const sid = await createSession(demoAgent);
    const first = await submitTurn(sid, "what is 2 * (3 + 4)?");
    const before = await waitForTurnEnd(sid, first.turn_id);
    const after = 3;

    const stream = await sse(sid, `after=${after}`);
    await stream.waitForCount(before.length - after);
    expectSameEvents(stream.events, before.slice(after));

    const second = await submitTurn(sid, "what is 5 + 5?");
    expect((await stream.waitForTurnEnd(second.turn_id)).type).toBe("turn.completed");

    const log = await events(sid);
    expectGapless(log);
    expectSameEvents(stream.events, log.slice(after));
    for (const [i, msg] of stream.messages.entries()) {
      expect(msg.id).toBe(String(log[after + i]!.sequence));
      expect(msg.event).toBe(log[after + i]!.type);
    }
    expect(stream.ended).toBe(false);
  });

  it("uses Last-Event-ID as the cursor when `after` is absent", async () => {
    const sid = await createSession(demoAgent);
    const { turn_id } = await submitTurn(sid, "what is 2 * (3 + 4)?");
    const log = await waitForTurnEnd(sid, turn_id);
    const lastSeen = 5;

    const stream = await sse(sid, "", { authorization: `Bearer ${KEY}`, "last-event-id": String(lastSeen) });
    await stream.waitForCount(log.length - lastSeen);
    expect(stream.messages[0]!.id).toBe(String(lastSeen + 1));
    expectSameEvents(stream.events, log.slice(lastSeen));
  });

  it("a stream the client cancels or aborts leaves the session's fan-out at once; a live stream still gets new events", async () => {
    const sid = await createSession(demoAgent);
    const liveSinks = () => runInDurableObject(sessionStub(sid), (o: SessionObject) => o["hub"]["sse"].size);
    for (let i = 0; i < 40; i++) {
      const abort = new AbortController();
      const res = await SELF.fetch(`${BASE}/v1/sessions/${sid}/events`, {
        headers: { accept: "text/event-stream", authorization: `Bearer ${KEY}` },
        signal: abort.signal,
      });
      const reader = res.body!.getReader();
      await reader.read(); // session.created: the stream is open and subscribed
      if (i % 2 === 0) await reader.cancel();
      else abort.abort();
    }
    // Well before any keep-alive (25 s), whose write was the only thing that noticed a client gone.
    await until(async () => (await liveSinks()) === 0, "every cancelled stream to leave the fan-out");

    const stream = await sse(sid);
    await stream.waitForCount(1);
    expect(await liveSinks()).toBe(1);
    const { turn_id } = await submitTurn(sid, "what is 5 + 5?");
    expect((await stream.waitForTurnEnd(turn_id)).type).toBe("turn.completed");
  });
});

describe("streams opened with a browser token end when it expires", () => {
  it("a WebSocket is closed with 4001 at the token's expiry, as HTTP starts answering 401 token_expired", async () => {
    const sid = await createSession(demoAgent);
    const { token, expiresAt } = await shortLivedToken({ subject: "viewer", session_id: sid }, 3);
    const ws = await openWs(sid, `access_token=${token}`, {});
    await ws.waitForCount(1);
    const closed = await until(() => ws.closed, "the socket to be closed at the token's expiry");
    expect(closed).toEqual({ code: 4001, reason: expect.stringContaining("token_expired") });
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    const late = await api("GET", `/v1/sessions/${sid}/thread`, undefined, { authorization: `Bearer ${token}` });
    expect(late.body.error.code).toBe("token_expired");
  });

  it("a hibernated socket whose token expired runs no frame: submit_turn after the expiry submits nothing", async () => {
    const sid = await createSession(demoAgent);
    const { token, expiresAt } = await shortLivedToken({ subject: "writer", session_id: sid }, 3);
    const ws = await openWs(sid, `access_token=${token}`, {});
    expect(await ws.command({ type: "submit_turn", input: "what is 1 + 1?", request_id: "in-time" })).toMatchObject({ ok: true });
    await ws.waitForEvent((e) => e.type === "turn.completed", "the turn sent in time");
    await evictDurableObject(sessionStub(sid));
    await until(() => Date.now() >= expiresAt, "the token's expiry");
    try {
      ws.send({ type: "submit_turn", input: "what is 2 + 2?", request_id: "too-late" });
    } catch {
      // already closed by the expiry
    }
    expect(await until(() => ws.closed, "the socket to be closed")).toMatchObject({ code: 4001 });
    expect(ws.replies.find((r) => r.request_id === "too-late")).toBeUndefined();
    const submitted = (await events(sid)).filter((e) => e.type === "turn.submitted");
    expect(submitted.map((e) => e.payload.input)).toEqual(["what is 1 + 1?"]);
  });

  it("an SSE stream ends at the token's expiry with an `error` event token_expired", async () => {
    const sid = await createSession(demoAgent);
    const { token } = await shortLivedToken({ subject: "viewer", session_id: sid }, 3);
    const stream = await sse(sid, `access_token=${token}`, {});
    await stream.waitForCount(1);
    await until(() => stream.ended, "the stream to end at the token's expiry");
    expect(stream.messages.map((m) => m.event)).toEqual(["session.created", "error"]);
    expect(JSON.parse(stream.messages[1]!.data)).toEqual({ error: { code: "token_expired", message: expect.any(String) } });
  });
});

describe("WebSocket across a Durable Object eviction", () => {
  it("a hibernated socket stays open and receives the next turn with no gap; its channel and command frames still work", async () => {
    // In this pool version evictDurableObject hibernates WebSockets by default (they stay open).
    const sid = await createSession(demoAgent);
    const ws = await openWs(sid, "channel=hib");
    const first = await submitTurn(sid, "what is 2 * (3 + 4)?");
    await ws.waitForTurnEnd(first.turn_id);

    await evictDurableObject(sessionStub(sid));
    expect(ws.closed).toBeNull();

    // A turn submitted over HTTP wakes a new instance, which must find the socket and broadcast to it.
    const second = await submitTurn(sid, "what is 6 * 7?");
    expect((await ws.waitForTurnEnd(second.turn_id)).type).toBe("turn.completed");
    expectSameEvents(ws.events, await events(sid));

    // After another eviction, frames on the hibernated socket wake the object: its attachment (the
    // channel) survived, and a command frame is answered.
    await evictDurableObject(sessionStub(sid));
    const acked = ws.lastSequence;
    ws.send({ type: "ack", sequence: acked });
    const reply = await ws.command({ type: "submit_turn", input: "what is 10 - 3?", request_id: "after-evict" });
    expect(reply).toMatchObject({ ok: true, result: { status: "accepted" } });
    expect((await ws.waitForTurnEnd(reply.result.turn_id)).type).toBe("turn.completed");

    const log = await events(sid);
    expectGapless(log);
    expectSameEvents(ws.events, log);
    expect(ws.closed).toBeNull();
    const snap = await api("GET", `/v1/sessions/${sid}`);
    expect(snap.body.channels).toEqual([expect.objectContaining({ channel_id: "hib", acked_sequence: acked })]);
  });

  it("when eviction closes the sockets, reconnecting from the last sequence seen gives exactly the rest", async () => {
    const sid = await createSession(demoAgent);
    const ws = await openWs(sid);
    const first = await submitTurn(sid, "what is 2 * (3 + 4)?");
    await ws.waitForTurnEnd(first.turn_id);

    await evictDurableObject(sessionStub(sid), { webSockets: "close" });
    await until(() => ws.closed, "the socket to be closed by the eviction");
    const seen = [...ws.events];

    const second = await submitTurn(sid, "what is 6 * 7?");
    const resumed = await openWs(sid, `after=${seen.at(-1)!.sequence}`);
    expect((await resumed.waitForTurnEnd(second.turn_id)).type).toBe("turn.completed");

    const log = await events(sid);
    expectGapless(log);
    expectSameEvents([...seen, ...resumed.events], log);
  });
});
