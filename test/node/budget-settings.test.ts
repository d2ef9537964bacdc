// The deployment's maxima of a turn's model calls (BUDGET_MAX_LLM_CALLS) and tool calls (BUDGET_MAX_TOOL_CALLS),
// here lowered below the defaults, in a whole runtime under `wrangler dev`: an agent's budget over them is
// refused when saved, and a turn of an agent that sets nothing runs with the lowered limit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const KEY = "budget-settings-key";
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY, LOGS: "off", BUDGET_MAX_LLM_CALLS: "1", BUDGET_MAX_TOOL_CALLS: "40" });
}, 90_000);
afterAll(() => rt?.stop());

const call = (method: string, path: string, body?: unknown) => rt.call(method, path, body);

describe("budget settings of the deployment", () => {
  it("refuses a budget over the lowered maxima and holds a turn to them", async () => {
    const refused = await call("PUT", "/v1/agents/greedy", { model: "demo:fast", budget: { max_total_llm_calls: 2, max_total_tool_calls: 41 } });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([
      { path: "budget.max_total_llm_calls", reason: "must be at most the deployment's maximum 1 (BUDGET_MAX_LLM_CALLS)" },
      { path: "budget.max_total_tool_calls", reason: "must be at most the deployment's maximum 40 (BUDGET_MAX_TOOL_CALLS)" },
    ]);
    expect((await call("GET", "/v1/agents/greedy")).status).toBe(404);

    // An agent that sets nothing: the default 60 model calls is held to the deployment's 1, so the demo
    // model's calculator round trip (two model calls) stops at the second.
    const { session_id } = (await call("POST", "/v1/sessions", { agent: { name: "plain", model: "demo:fast", tools: ["calculator"] } })).body;
    expect((await call("GET", `/v1/sessions/${session_id}/thread`)).body.budget.limits).toMatchObject({ max_total_llm_calls: 1, max_total_tool_calls: 40 });
    expect((await call("POST", `/v1/sessions/${session_id}/turns`, { input: "what is 2 + 2?" })).status).toBe(202);
    const ended = (log: any[]) => log.some((e) => ["turn.completed", "turn.failed", "turn.cancelled"].includes(e.type));
    let log: any[] = [];
    for (let i = 0; i < 100 && !ended(log); i++) {
      await new Promise((r) => setTimeout(r, 100));
      log = (await call("GET", `/v1/sessions/${session_id}/events?after=0`)).body.events;
    }
    expect(log.find((e) => e.type === "budget.exceeded")?.payload).toEqual({ reason: "llm_calls", limit: 1, observed: 2 });
    expect(log.at(-1)).toMatchObject({ type: "turn.failed", payload: { error: { code: "budget_exceeded" } } });
  }, 60_000);
});
