// One agent of the runtime calling another over A2A (docs/guides/a2a.md), a real HTTP hop: the runtime runs in a
// Miniflare process listening on a port, and the caller's `a2a_agents` entry names that port's JSON-RPC URL (or
// the Agent Card's). The remote task's answer comes back as the tool result, its input-required as the result's
// question (one nobody answers in time, or the user declines, cancels the remote task), cancelling the caller's
// turn (even while that question waits, and after a restart) cancels the remote task, and a restart mid-call sends
// nothing twice.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeOptions } from "../../bench/lib/miniflare.mjs";
import { verifyLog } from "../../src/engine/verify-log";
import type { Step } from "../support/fake-model";
import { bundledWithFakeModel, callRuntime, scriptedModel, until } from "./support/runtime-process";
import { freePort } from "./support/wrangler-dev";

const KEY = "a2a-client-key";
const setup = bundledWithFakeModel();

/** The runtime on `state`, listening on `port` (its A2A endpoints are reached there by its own tools). */
function runtime(state: string, port: number): Miniflare {
  const base = `http://127.0.0.1:${port}`;
  const bindings = { API_KEYS: KEY, OPENAI_COMPATIBLE_BASE_URL: setup.fakeBase, TOOL_URL_ALLOWLIST: `${setup.fakeBase}/,${base}/a2a/`, LOGS: "off" };
  return new Miniflare({ ...runtimeOptions(setup.bundle, state, bindings), host: "127.0.0.1", port });
}

const script = (steps: Step[]) => scriptedModel(setup.fakeBase, steps);

const call = (mf: Miniflare, method: string, path: string, body?: unknown) => callRuntime(mf, KEY, method, path, body);
const log = async (mf: Miniflare, sid: string): Promise<any[]> => (await call(mf, "GET", `/v1/sessions/${sid}/events?after=0&limit=1000`)).events;
const remoteSessions = async (mf: Miniflare, agent: string): Promise<string[]> =>
  (await call(mf, "GET", `/v1/sessions?agent=${agent}`)).sessions.map((s: { session_id: string }) => s.session_id);

/** A caller agent whose model calls the tool `remote` once with `message`, then answers "done". */
async function caller(mf: Miniflare, port: number, remote: string, url = `/a2a/${remote}`, config: Record<string, unknown> = {}): Promise<string> {
  const model = await script([{ tool_calls: [{ name: "remote", arguments: { message: "what is 6 * 7?" } }] }, { text: "done" }]);
  const a2a_agents = [{ name: "remote", url: `http://127.0.0.1:${port}${url}`, headers: { authorization: `Bearer ${KEY}` }, timeout_ms: 60_000 }];
  await call(mf, "PUT", `/v1/agents/caller-${remote}`, { model, a2a_agents, ...config });
  const { session_id } = await call(mf, "POST", "/v1/sessions", { agent: `caller-${remote}` });
  await call(mf, "POST", `/v1/sessions/${session_id}/turns`, { input: "ask the remote agent" });
  return session_id;
}

const toolResult = (events: any[]) => events.find((e) => e.type === "tool.result" && e.payload.name === "remote")?.payload;

describe("an agent calling another over A2A", () => {
  const state = mkdtempSync(join(tmpdir(), "agent-runtime-a2a-"));
  let port: number;
  let mf: Miniflare;
  beforeAll(async () => {
    port = await freePort();
    mf = runtime(state, port);
    await mf.ready;
  }, 60_000);
  afterAll(async () => {
    await mf.dispose();
    rmSync(state, { recursive: true, force: true });
  });

  it("gets the remote task's answer as the tool result (through the Agent Card), with its status updates as progress", async () => {
    await call(mf, "PUT", "/v1/agents/calc", { model: "demo:fast", tools: ["calculator"] });
    const sid = await caller(mf, port, "calc", "/a2a/calc/.well-known/agent-card.json");
    await until(async () => (await log(mf, sid)).some((e) => e.type === "turn.completed"));
    const events = await log(mf, sid);
    expect(verifyLog(events)).toEqual([]);
    expect(toolResult(events)).toMatchObject({ is_error: false, output: { state: "TASK_STATE_COMPLETED", answer: "The answer is 42." } });
    expect(events.some((e) => e.type === "mcp.progress" && e.payload.server === "remote")).toBe(true);
    expect(await remoteSessions(mf, "calc")).toHaveLength(1);
  });

  it("asks this session's user what the remote task waits for, and sends the answer to that task", async () => {
    await call(mf, "PUT", "/v1/agents/careful", { model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] });
    const sid = await caller(mf, port, "careful");
    let asked: any;
    await until(async () => {
      asked = (await log(mf, sid)).find((e) => e.type === "action.required");
      return asked !== undefined;
    });
    expect(asked).toMatchObject({ payload: { kind: "user_input", tool_name: "remote", question: expect.stringContaining("calculator") } });
    // The caller's session waits on the question, as for ask_user.
    expect((await call(mf, "GET", `/v1/sessions/${sid}`)).status).toBe("waiting_permission");
    await call(mf, "POST", `/v1/sessions/${sid}/actions/${asked.action_id}`, { response: "approve" });
    await until(async () => (await log(mf, sid)).some((e) => e.type === "turn.completed"));
    const events = await log(mf, sid);
    expect(verifyLog(events)).toEqual([]);
    expect(toolResult(events)).toMatchObject({ is_error: false, output: { state: "TASK_STATE_COMPLETED", answer: "The answer is 42." } });
    // One remote task: the answer went to it as its next message.
    const [remote] = await remoteSessions(mf, "careful");
    const remoteLog = await log(mf, remote!);
    expect(remoteLog.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    expect(remoteLog.find((e) => e.type === "action.resolved").payload).toMatchObject({ decision: "approved" });
  });

  it("cancels the remote task when nobody answers its question in time, or the user declines it: the call ends with an error saying so", async () => {
    for (const [remote, declines] of [
      ["careful-late", false],
      ["careful-declined", true],
    ] as const) {
      await call(mf, "PUT", `/v1/agents/${remote}`, { model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] });
      const sid = await caller(mf, port, remote, undefined, { approval_timeout_ms: declines ? 600_000 : 1000 });
      let asked: any;
      await until(async () => {
        asked = (await log(mf, sid)).find((e) => e.type === "action.required");
        return asked !== undefined;
      });
      if (declines) await call(mf, "POST", `/v1/sessions/${sid}/actions/${asked.action_id}`, { decision: "reject" });
      await until(async () => (await log(mf, sid)).some((e) => e.type === "turn.completed"), 30_000);
      const events = await log(mf, sid);
      expect(verifyLog(events)).toEqual([]);
      expect(events.find((e) => e.type === "action.resolved").payload.decision).toBe(declines ? "rejected" : "timed_out");
      const [task] = await remoteSessions(mf, remote);
      const why = declines ? "the user declined to answer it" : "nobody answered it before its deadline";
      expect(toolResult(events)).toMatchObject({ is_error: true, output: expect.stringContaining(`asked a question and ${why}: its task task_`) });
      expect(toolResult(events).output).toContain("was cancelled");
      // The remote task was cancelled (CancelTask), not left waiting for an answer that will never come.
      const remoteLog = await log(mf, task!);
      expect(remoteLog.find((e) => e.type === "turn.cancelled")?.payload.reason).toBe("cancelled by the A2A client");
      expect((await call(mf, "GET", `/v1/sessions/${task}`)).status).not.toBe("waiting_permission");
    }
  }, 60_000);

  it("cancels the remote task when the caller's turn is cancelled", async () => {
    await call(mf, "PUT", "/v1/agents/slow", { model: "demo:slow" });
    const sid = await caller(mf, port, "slow");
    let remote = "";
    await until(async () => {
      remote = (await remoteSessions(mf, "slow"))[0] ?? "";
      return remote !== "" && (await log(mf, remote)).some((e) => e.type === "model.delta");
    });
    await call(mf, "POST", `/v1/sessions/${sid}/interrupt`, { reason: "the user stopped it" });
    await until(async () => (await log(mf, remote)).some((e) => e.type === "turn.cancelled"));
    expect((await log(mf, remote)).find((e) => e.type === "turn.cancelled").payload.reason).toBe("cancelled by the A2A client");
  }, 30_000);

  it("cancels the remote task whose question waits when the caller's turn is cancelled (after a restart too) or its session erased", async () => {
    for (const how of ["cancel", "restart then cancel", "erase"] as const) {
      const remote = `careful-${how.replaceAll(" ", "-")}`;
      await call(mf, "PUT", `/v1/agents/${remote}`, { model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] });
      const sid = await caller(mf, port, remote);
      let asked: any;
      await until(async () => {
        asked = (await log(mf, sid)).find((e) => e.type === "action.required");
        return asked !== undefined;
      });
      const [task] = await remoteSessions(mf, remote);
      if (how === "restart then cancel") {
        await mf.dispose(); // the question waits in the caller's checkpoint: its remote task id with it
        mf = runtime(state, port);
        await mf.ready;
      }
      if (how === "erase") {
        const erased = await mf.dispatchFetch(`http://runtime/v1/sessions/${sid}`, { method: "DELETE", headers: { authorization: `Bearer ${KEY}` } });
        expect(erased.status).toBe(204);
      } else await call(mf, "POST", `/v1/sessions/${sid}/interrupt`, { reason: "the user stopped it" });
      await until(async () => (await log(mf, task!)).some((e) => e.type === "turn.cancelled"), 30_000);
      expect((await log(mf, task!)).find((e) => e.type === "turn.cancelled").payload.reason).toBe("cancelled by the A2A client");
      if (how === "erase") continue; // the caller's log is gone with its session
      await until(async () => (await log(mf, sid)).some((e) => e.type === "question.dropped"));
      const events = await log(mf, sid);
      expect(verifyLog(events)).toEqual([]);
      expect(events.find((e) => e.type === "turn.cancelled").payload.reason).toBe("the user stopped it");
      // Once, after the turn's end, saying what became of the remote task.
      const dropped = events.filter((e) => e.type === "question.dropped");
      expect(dropped).toHaveLength(1);
      expect(dropped[0].payload).toMatchObject({ turn_id: asked.turn_id, tool_call_id: asked.tool_call_id, name: "remote" });
      expect(dropped[0].payload.message).toMatch(
        /^The remote agent "remote" asked a question and the turn was cancelled before it was answered: its task task_\S+ was cancelled$/,
      );
    }
  }, 120_000);

  it("a restart of the runtime mid-call resumes the call without sending the message twice", async () => {
    await call(mf, "PUT", "/v1/agents/slow2", { model: "demo:slow" });
    const sid = await caller(mf, port, "slow2");
    let remote = "";
    await until(async () => {
      remote = (await remoteSessions(mf, "slow2"))[0] ?? "";
      return remote !== "" && (await log(mf, remote)).some((e) => e.type === "model.delta");
    });
    await mf.dispose(); // the whole process ends here, mid-call
    mf = runtime(state, port);
    await mf.ready;
    await until(async () => (await log(mf, sid)).some((e) => e.type === "turn.completed"), 60_000);
    const events = await log(mf, sid);
    expect(verifyLog(events)).toEqual([]);
    expect(toolResult(events)).toMatchObject({ is_error: false, output: { state: "TASK_STATE_COMPLETED" } });
    const remoteLog = await log(mf, remote);
    expect(remoteLog.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    expect(await remoteSessions(mf, "slow2")).toEqual([remote]);
  }, 90_000);
});
