// Erasure reaches the sessions made from the erased one, through HTTP: DELETE /v1/sessions/:sid and
// DELETE /v1/resources/:rid?sessions=true erase the forks and replays of the sessions they erase (and theirs), so
// afterwards none is readable, exportable or listed under the owner; erasing a session mid-turn logs no error.
import { env, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RuntimeClient } from "../../src/client";
import { indexShard } from "../../src/objects/index/index-shards";
import type { SessionSummary } from "../../src/protocol/session-list";
import { api, events, KEY, submitTurn, waitForEvent, waitForTurnEnd } from "../support/api";
import { type Step, script, uniqueId } from "../support/fake-model";
import { until } from "../support/ws";

/** A session (of `owner`, and of resource `resource_id` when given) whose one turn ran `steps` to its end. */
async function ended(owner: string, steps: Step[], extra: Record<string, unknown> = {}) {
  const scriptId = uniqueId("erase");
  await script(scriptId, steps);
  const res = await api("POST", "/v1/sessions", { agent: { name: "erased", model: `openai-compatible:${scriptId}` }, owner, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const sid: string = res.body.session_id;
  const { turn_id } = await submitTurn(sid, "remember my address: 1 Main St");
  await waitForTurnEnd(sid, turn_id);
  return { sid, turn_id };
}

/** A replay of `turnId` of `sid`, run to its end. */
async function replayed(sid: string, turnId: string) {
  const res = await api("POST", `/v1/sessions/${sid}/turns/${turnId}/replay`, {});
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await waitForEvent(res.body.exec_id, (e) => e.type === "replay.completed");
  return { sid: res.body.exec_id as string, turn_id: res.body.turn_id as string };
}

const listed = async (owner: string) => ((await api("GET", `/v1/sessions?owner=${owner}&limit=100`)).body.sessions as any[]).map((s) => s.session_id).sort();

/** Every session in `sids` is gone: 404 to a read and an export, and none is listed under `owner`. */
async function expectGone(sids: string[], owner: string) {
  for (const sid of sids) {
    expect((await api("GET", `/v1/sessions/${sid}`)).status, sid).toBe(404);
    expect((await api("GET", `/v1/sessions/${sid}/export`)).status, sid).toBe(404);
    expect((await api("GET", `/v1/replays/${sid}`)).status, sid).toBe(404);
  }
  expect(await listed(owner)).toEqual([]);
}

describe("erasing a session erases the sessions made from it", () => {
  it("DELETE /v1/sessions/:sid erases its replays, a replay of a replay and its forks", async () => {
    const owner = uniqueId("owner");
    const source = await ended(owner, [{ text: "Noted: 1 Main St." }]);
    const replay = await replayed(source.sid, source.turn_id);
    const replayOfReplay = await replayed(replay.sid, replay.turn_id);
    const forked = await api("POST", `/v1/sessions/${source.sid}/fork`, { at_sequence: (await events(source.sid)).at(-1).sequence });
    expect(forked.status).toBe(201);
    const made = [replay.sid, replayOfReplay.sid, forked.body.session_id as string];
    const exported = await api("GET", `/v1/sessions/${replay.sid}/export`);
    expect(exported.body).toContain("1 Main St");
    await until(async () => (await listed(owner)).length === 4, "the four sessions listed under the owner");

    expect((await api("DELETE", `/v1/sessions/${source.sid}`)).status).toBe(204);
    await expectGone([source.sid, ...made], owner);
    expect((await api("DELETE", `/v1/sessions/${source.sid}`)).status).toBe(204); // idempotent
  });

  it("names in a 200 answer a replay it could not erase (its index shard failing), which a DELETE of its own then erases", async () => {
    // A source and a replay whose index rows live in different shards, so that only the replay's erase fails.
    let owner = "";
    let source = { sid: "", turn_id: "" };
    let replay = { sid: "", turn_id: "" };
    do {
      owner = uniqueId("owner-left");
      source = await ended(owner, [{ text: "Noted." }]);
      replay = await replayed(source.sid, source.turn_id);
    } while (indexShard(env, replay.sid).id.equals(indexShard(env, source.sid).id));
    await until(
      async () => ((await indexShard(env, replay.sid).indexedSession(replay.sid)) as SessionSummary | null)?.turns === 1,
      "the replay's index row after its turn",
    );
    await indexShard(env, replay.sid).failIndexWrites(1);

    const partly = await api("DELETE", `/v1/sessions/${source.sid}`);
    expect(partly.status).toBe(200);
    expect(partly.body).toEqual({ left: [{ session_id: replay.sid, reason: expect.stringContaining("index erase failed") }] });
    expect((await api("GET", `/v1/sessions/${source.sid}`)).status).toBe(404);
    expect((await api("GET", `/v1/sessions/${replay.sid}`)).status).toBe(200); // still there, as the answer says

    // The client says the same: here nothing is left.
    const client = new RuntimeClient({ url: "https://runtime.test", key: KEY, fetch: (url, init) => SELF.fetch(url, init) });
    expect(await client.eraseSession(replay.sid)).toEqual({ left: [] });
    await expectGone([source.sid, replay.sid], owner);
  });

  it("DELETE /v1/resources/:rid?sessions=true erases the replays of the resource's sessions too", async () => {
    const rid = uniqueId("resource");
    const source = await ended(rid, [{ text: "Noted: 1 Main St." }], { resource_id: rid });
    const replay = await replayed(source.sid, source.turn_id);
    await until(async () => (await listed(rid)).length === 2, "the session and its replay listed under the owner");

    expect((await api("DELETE", `/v1/resources/${rid}?sessions=true`)).status).toBe(204);
    await expectGone([source.sid, replay.sid], rid);
  });
});

describe("erasing a session while its turn streams", () => {
  afterEach(() => vi.restoreAllMocks());

  it("ends the turn, and the turn its live message would have started, without logging a failed commit", async () => {
    const errors = vi.spyOn(console, "error");
    const scriptId = uniqueId("erase-midturn");
    const streaming: Step = { text: "a long answer that keeps streaming for a while", chunk_size: 2, delay_ms: 20 };
    await script(scriptId, [streaming, streaming]);
    const sid = (await api("POST", "/v1/sessions", { agent: { name: "midturn", model: `openai-compatible:${scriptId}` } })).body.session_id;
    await submitTurn(sid, "talk");
    await waitForEvent(sid, (e) => e.type === "model.delta");
    // A live message the running turn has not taken yet: cut, the turn leaves it as a turn of its own.
    expect((await api("POST", `/v1/sessions/${sid}/turns`, { input: "and more", on_busy: "inject" })).status).toBe(202);
    expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    // Past the delta window: a flush of deltas left waiting would have run (and failed) by now.
    await new Promise((r) => setTimeout(r, 200));
    expect((await api("GET", `/v1/sessions/${sid}`)).status).toBe(404);
    const logged = errors.mock.calls.map((args) => args.map(String).join(" "));
    expect(logged.filter((line) => /committing waiting events failed|Session was not found/.test(line))).toEqual([]);
  });
});
