// Durable execution: large outputs spilled to R2 and read back, crash recovery mid-tool and with queued
// turns waiting, all checked by the log verifier (test/support/api.ts runs it on every whole log read).
import { abortAllDurableObjects, env, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { SessionObject } from "../../../src/session/object";
import type { TurnRunner } from "../../../src/session/runner/turn-runner";
import { api, createSession, events, expectGapless, KEY, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { toolResultDraft } from "../../support/drafts";
import { requests, type Step, script, toolURL, uniqueId } from "../../support/fake-model";

async function scriptedSession(steps: Step[], extra: Record<string, unknown> = {}) {
  const scriptId = uniqueId("durable");
  await script(scriptId, steps);
  const sid = await createSession({ name: "durable", model: `openai-compatible:${scriptId}`, ...extra });
  return { sid, scriptId };
}

const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));

async function artifact(sid: string, id: string): Promise<Response> {
  return SELF.fetch(`https://runtime.test/v1/sessions/${sid}/artifacts/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
}

describe("large outputs", () => {
  it("a ~900 KB tool result goes to R2 whole; events and the model get a preview and the artifact id", async () => {
    const big = "x".repeat(900_000);
    const { sid, scriptId } = await scriptedSession([{ tool_calls: [{ name: "echo", arguments: { blob: big } }] }, { text: "got it" }], {
      http_tools: [{ name: "echo", url: toolURL("echo"), parameters: { type: "object", properties: { blob: { type: "string" } } } }],
    });
    const { turn_id } = await submitTurn(sid, "echo a lot");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);

    const spilled = log.find((e) => e.type === "output.spilled");
    const result = log.find((e) => e.type === "tool.result");
    const id = spilled.payload.artifact_id;
    expect(id).toMatch(/^art_[0-9a-f]{24}$/);
    expect(spilled.tool_call_id).toBe(result.tool_call_id);
    expect(result.payload.metadata.offloaded_artifact_id).toBe(id);
    expect(result.refs).toEqual([{ kind: "artifact", id, bytes: spilled.payload.bytes }]);
    expect(result.payload.output).toContain(`artifact ${id}`);
    expect(result.payload.output.length).toBeLessThan(3_000);

    // The whole result comes back from the artifacts route, byte for byte.
    const res = await artifact(sid, id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as { received: { args: { blob: string } } };
    expect(body.received.args.blob).toBe(big);
    expect(spilled.payload.bytes).toBe(JSON.stringify(body).length);

    // The tool call's large arguments were spilled too, and no event is large.
    const started = log.find((e) => e.type === "tool.started");
    expect(started.refs[0].kind).toBe("artifact");
    expect(Math.max(...log.map((e) => JSON.stringify(e).length))).toBeLessThan(60_000);

    // The model saw the preview, never the whole payload.
    const second = (await requests(scriptId))[1];
    const toolMessage = second.messages.find((m: any) => m.role === "tool");
    expect(toolMessage.content.length).toBeLessThan(3_000);
    expect(toolMessage.content).toContain(id);
  });

  it("another session's artifact, or an unknown one, is 404", async () => {
    const { sid } = await scriptedSession([{ tool_calls: [{ name: "echo", arguments: { blob: "y".repeat(60_000) } }] }, { text: "ok" }], {
      http_tools: [{ name: "echo", url: toolURL("echo") }],
    });
    const { turn_id } = await submitTurn(sid, "go");
    const id = (await waitForTurnEnd(sid, turn_id)).find((e) => e.type === "output.spilled").payload.artifact_id;
    expect((await artifact(sid, id)).status).toBe(200);
    const other = await createSession({ name: "other", model: "demo:x" });
    const res = await artifact(other, id);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "not_found", message: `Artifact '${id}' was not found` } });
    expect((await artifact(sid, "art_000000000000000000000000")).status).toBe(404);
    expect((await artifact(sid, "../../x")).status).toBe(404);
  });

  it("a lower max_tool_result_bytes in the agent's budget spills earlier", async () => {
    const { sid } = await scriptedSession([{ tool_calls: [{ name: "clock", arguments: {} }] }, { text: "ok" }], {
      tools: ["clock"],
      budget: { max_tool_result_bytes: 10 },
    });
    const { turn_id } = await submitTurn(sid, "time?");
    const log = await waitForTurnEnd(sid, turn_id);
    const spilled = log.find((e) => e.type === "output.spilled");
    const res = await artifact(sid, spilled.payload.artifact_id);
    expect(JSON.parse(await res.text())).toHaveProperty("iso");
  });
});

describe("crash recovery", () => {
  it("a restart during a non-idempotent tool call gives it a 'lost' result; the model decides and the turn ends", async () => {
    const { sid, scriptId } = await scriptedSession([{ tool_calls: [{ name: "slow", arguments: {} }] }, { text: "the call was lost, so I stopped" }], {
      http_tools: [{ name: "slow", url: toolURL("slow?ms=3000") }],
    });
    const { turn_id } = await submitTurn(sid, "do the slow thing");
    await waitForEvent(sid, (e) => e.type === "tool.started");
    await abortAllDurableObjects();
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const types = log.filter((e) => e.turn_id === turn_id).map((e) => e.type);
    expect(types.slice(types.indexOf("tool.started"))).toEqual([
      "tool.started",
      "run.status",
      "tool.result",
      "model.requested",
      ...types.filter((t) => t === "model.delta").map(() => "model.delta"),
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    const result = log.find((e) => e.type === "tool.result");
    expect(result.payload.is_error).toBe(true);
    expect(result.payload.output).toMatchObject({ category: "lost" });
    const toolMessage = (await requests(scriptId))[1].messages.find((m: any) => m.role === "tool");
    expect(toolMessage.content).toContain("lost");
  });

  it("queued turns survive a restart of the running one and then run in order", async () => {
    const slow: Step = { text: "a".repeat(60), chunk_size: 2, delay_ms: 20 };
    const { sid } = await scriptedSession([slow, { text: "first, again" }, { text: "second" }, { text: "third" }]);
    const first = await submitTurn(sid, "one");
    const second = await submitTurn(sid, "two");
    const third = await submitTurn(sid, "three");
    await waitForEvent(sid, (e) => e.type === "model.delta");
    await abortAllDurableObjects();
    const log = await waitForTurnEnd(sid, third.turn_id);
    expectGapless(log);
    const ends = log.filter((e) => e.type === "turn.completed").map((e) => [e.turn_id, e.payload.output]);
    expect(ends).toEqual([
      [first.turn_id, "first, again"],
      [second.turn_id, "second"],
      [third.turn_id, "third"],
    ]);
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body).toMatchObject({ status: "idle", queued_turns: [] });
    expect(await events(sid)).toHaveLength(log.length);
  });

  it("a turn's heartbeat alarm outlives it: the next turn keeps it, and firing with nothing running changes nothing", async () => {
    const { sid } = await scriptedSession([{ text: "one" }, { text: "two" }]);
    const alarm = () => runInDurableObject(stub(sid), (_instance, state) => state.storage.getAlarm());
    const first = await submitTurn(sid, "one");
    await waitForTurnEnd(sid, first.turn_id);
    const armed = await alarm();
    expect(armed).toBeGreaterThan(Date.now());
    // Moving it later (or deleting it) at every turn's end would be a write on the turn's way out.
    const second = await submitTurn(sid, "two");
    await waitForTurnEnd(sid, second.turn_id);
    expect(await alarm()).toBe(armed);
    const before = await events(sid);
    expect(await runDurableObjectAlarm(stub(sid))).toBe(true);
    expect(await events(sid)).toEqual(before);
    expect(await alarm()).toBeNull();
    expect((await api("GET", `/v1/sessions/${sid}/thread`)).body).toMatchObject({ status: "idle" });
  });

  it("an interrupt writes a held tool result first and does not close its call a second time", async () => {
    const { sid } = await scriptedSession([{ tool_calls: [{ name: "slow", arguments: {} }] }, { text: "never" }], {
      http_tools: [{ name: "slow", url: toolURL("slow?ms=3000") }],
    });
    const { turn_id } = await submitTurn(sid, "start the slow thing");
    const started = await waitForEvent(sid, (e) => e.type === "tool.started");
    // In one task, so the hold's timer cannot write it first: the call's result waits as a held event, as the
    // loop leaves it until the next model call's start, and the turn is interrupted then.
    await runInDurableObject(stub(sid), (instance: SessionObject) => {
      // The session object's own parts, as the loop's ports use them.
      const { store, pending } = instance;
      const { runner } = (instance as unknown as { parts: { runner: TurnRunner } }).parts;
      const state = store.turnState(turn_id)!;
      const call = state.calls!.find((c) => c.tool_call_id === started.tool_call_id)!;
      call.status = "done";
      call.result = { output: "finished", is_error: false };
      pending.hold([toolResultDraft(turn_id, call.tool_call_id, "slow", "finished")], () => store.saveTurnState(state));
      runner.interrupt("stopped by the test");
    });
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    const results = log.filter((e) => e.type === "tool.result");
    expect(results.map((e) => [e.tool_call_id, e.payload.output])).toEqual([[started.tool_call_id, "finished"]]);
    expect(log.at(-1)).toMatchObject({ type: "turn.cancelled", payload: { reason: "stopped by the test" } });
  });
});
