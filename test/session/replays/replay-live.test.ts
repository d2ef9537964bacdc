// A live replay and the approvals of the turn it replays, through HTTP: an approval given once in the original
// answers a replay only where the tool's result also comes from the recording; a tool that runs again waits for
// a live decision in the replay session, and `tools: "live"` needs session.replay_live, which a browser token
// has only when minted with it. The echo webhook records the session of each call it gets.
import { describe, expect, it } from "vitest";
import { api, apiAs, createAgent, events, waitForEvent, waitForTurnEnd } from "../../support/api";
import { type Step, script, toolRequests, toolURL, uniqueId } from "../../support/fake-model";

const HOOK = {
  name: "hook",
  description: "Calls the tenant's webhook",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
};
const hook: Step = { tool_calls: [{ id: "h1", name: "hook", arguments: { word: "ship" } }] };

async function token(body: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/v1/tokens", { ttl_s: 600, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

/** How many calls the webhook got from `sessions`. */
const webhookCalls = async (sessions: string[]) => (await toolRequests()).filter((r: any) => sessions.includes(r.session_id)).length;

describe("a live replay of a turn with an approved side effect", () => {
  it("asks for a live decision in each replay (no call without one) and runs the tool once per decision; only a token minted with replay_live may", async () => {
    const scriptId = uniqueId("replay-live");
    await script(scriptId, [hook, { text: "shipped" }]);
    const name = `live-${crypto.randomUUID().slice(0, 8)}`;
    await createAgent({ name, model: `openai-compatible:${scriptId}`, http_tools: [HOOK], hitl_tools: ["hook"] });
    const browser = await token({ subject: "u-live", agent: name });
    const sid = (await apiAs("POST", "/v1/sessions", browser, { agent: name })).body.session_id as string;
    const turn = await apiAs("POST", `/v1/sessions/${sid}/turns`, browser, { input: "ship it" });
    expect(turn.status).toBe(202);
    const asked = await waitForEvent(sid, (e) => e.type === "action.required");
    expect((await api("POST", `/v1/sessions/${sid}/actions/${asked.action_id}`, { decision: "approve" })).status).toBe(200); // the admin, once
    await waitForTurnEnd(sid, turn.body.turn_id);
    expect(await webhookCalls([sid])).toBe(1);
    const replayPath = `/v1/sessions/${sid}/turns/${turn.body.turn_id}/replay`;

    // A browser token as minted by default replays only with recorded tools: the recorded approval answers the
    // recorded result, and nothing runs.
    const refused = await apiAs("POST", replayPath, browser, { tools: "live" });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", message: expect.stringContaining("session.replay_live") });
    const recorded = await apiAs("POST", replayPath, browser, {});
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    const recordedLog = await waitForTurnEnd(recorded.body.exec_id, recorded.body.turn_id);
    expect(recordedLog.filter((e) => e.type === "action.resolved").map((e) => e.payload)).toMatchObject([{ decision: "approved", by: "replay" }]);
    expect(recordedLog.find((e) => e.type === "turn.completed")).toMatchObject({ payload: { output: "shipped" } });
    expect(await webhookCalls([recorded.body.exec_id])).toBe(0);
    // A session-bound token never has the scope (it opens no sessions, and a replay is one).
    const bound = await api("POST", "/v1/tokens", { ttl_s: 600, subject: "u-live", session_id: sid, scopes: ["read", "replay_live"] });
    expect(bound.status).toBe(422);
    expect(bound.body.error.details[0]).toMatchObject({ path: "scopes", reason: expect.stringContaining("replay_live") });

    // Minted with replay_live, three live replays: each waits for its own decision, and the webhook is not called.
    const liveToken = await token({ subject: "u-live", agent: name, scopes: ["read", "create", "approve", "replay_live"] });
    await script(scriptId, [{ text: "shipped again" }]);
    const execs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const started = await apiAs("POST", replayPath, liveToken, { tools: "live" });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      execs.push(started.body.exec_id);
      await waitForEvent(started.body.exec_id, (e) => e.type === "action.required" && e.payload.tool_name === "hook");
    }
    const [first, ...others] = execs as [string, ...string[]];
    const pending = await waitForEvent(first, (e) => e.type === "action.required");
    expect((await apiAs("POST", `/v1/sessions/${first}/actions/${pending.action_id}`, liveToken, { decision: "approve" })).status).toBe(200);
    const firstLog = await waitForTurnEnd(first, (await events(first)).find((e) => e.type === "turn.started").turn_id);
    expect(firstLog.filter((e) => e.type === "action.resolved").map((e) => e.payload.by)).toEqual([expect.stringMatching(/^tok_u-live@key_[0-9a-f]{16}$/)]);
    expect(firstLog.find((e) => e.type === "turn.completed")).toMatchObject({ payload: { output: "shipped again" } });

    expect(await webhookCalls([first])).toBe(1); // the one live decision, the one call
    expect(await webhookCalls([sid, ...others])).toBe(1); // the original's; the other replays still wait
    for (const exec of others) {
      const log = await events(exec);
      expect(log.some((e) => e.type === "action.resolved")).toBe(false);
      expect(log.some((e) => e.type === "tool.started")).toBe(false);
    }
  });
});
