// The agent configuration contract through the public HTTP and WebSocket surface:
// validation and round trip, the planner phase, budget awareness, injected tool args, live message
// injection, handoffs and output_schema. The scripted fake model records what every call received.
import { env, evictDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { AGENT_DEFAULTS, api, createAgent, createSession, events, expectGapless, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { baseURL, requests, type Step, script, toolRequests, toolURL, uniqueId } from "../../support/fake-model";
import { closeAllSockets, openWs } from "../../support/ws";

afterEach(closeAllSockets);

/** A short unique suffix for names in the shared registry. */
const suffix = () => crypto.randomUUID().slice(0, 8);
const uniqueName = (prefix: string) => `${prefix}-${suffix()}`;
const types = (log: any[], turnId?: string) => log.filter((e) => !turnId || e.turn_id === turnId).map((e) => e.type as string);
const ofType = (log: any[], type: string) => log.filter((e) => e.type === type);
const indexOf = (log: any[], match: (e: any) => boolean) => {
  const i = log.findIndex(match);
  expect(i, "event not found in the log").toBeGreaterThanOrEqual(0);
  return i;
};
/** The text of a Chat Completions message's content (a string, or text parts). */
const text = (m: any): string =>
  typeof m?.content === "string" ? m.content : Array.isArray(m?.content) ? m.content.map((p: any) => p.text ?? "").join("") : "";
const roles = (req: any) => req.messages.map((m: any) => m.role as string);

/** A scripted model: returns the model string and the script id. */
async function scripted(steps: Step[], prefix = "cfg"): Promise<{ model: string; scriptId: string }> {
  const scriptId = uniqueId(prefix);
  await script(scriptId, steps);
  return { model: `openai-compatible:${scriptId}`, scriptId };
}

/** The full stored form of a config with only `name` and `model` given. */
type Detail = { path: string; reason: unknown };

/**
 * Expects `config` to be refused with 422 and exactly `details`, both by PUT /v1/agents/:name (nothing stored)
 * and as an inline config of POST /v1/sessions (paths prefixed with "agent.").
 */
async function expectRefused(config: Record<string, unknown>, details: Detail[]): Promise<void> {
  const name = (config.name as string | undefined) ?? uniqueName("bad");
  const body = { model: "demo:x", ...config, name };
  const put = await api("PUT", `/v1/agents/${name}`, body);
  expect(put.status, JSON.stringify(put.body)).toBe(422);
  expect(put.body.error.code).toBe("validation_failed");
  expect(put.body.error.details).toEqual(details);
  for (const d of details) expect(put.body.error.message).toContain(d.path);
  expect((await api("GET", `/v1/agents/${name}`)).status).toBe(404);

  const inline = await api("POST", "/v1/sessions", { agent: body });
  expect(inline.status, JSON.stringify(inline.body)).toBe(422);
  expect(inline.body.error.code).toBe("validation_failed");
  expect(inline.body.error.details).toEqual(details.map((d) => ({ ...d, path: d.path ? `agent.${d.path}` : "agent" })));
}

async function expectAccepted(config: Record<string, unknown>): Promise<any> {
  const name = uniqueName("ok");
  const body = { model: "demo:x", ...config, name };
  const put = await api("PUT", `/v1/agents/${name}`, body);
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  const got = await api("GET", `/v1/agents/${name}`);
  expect(got.body).toEqual(put.body);
  const inline = await api("POST", "/v1/sessions", { agent: body });
  expect(inline.status, JSON.stringify(inline.body)).toBe(201);
  return got.body;
}

const allowlisted = (path: string) => `${baseURL.replace(/\/v1$/, "")}/${path}`;

describe("validation (422, naming the field and the reason, nothing stored)", () => {
  it("max_parallel_subagents must be 1..7", async () => {
    for (const value of [0, 8]) {
      await expectRefused({ max_parallel_subagents: value }, [{ path: "max_parallel_subagents", reason: expect.stringMatching(/between 1 and 7/) }]);
    }
    for (const value of [1, 7]) expect((await expectAccepted({ max_parallel_subagents: value })).max_parallel_subagents).toBe(value);
  });

  it('budget_awareness is exactly "per-message" or "limit:0".."limit:100"', async () => {
    for (const value of ["sometimes", "limit:101", "limit:-1", "limit:", "limit:50%", "Per-Message", " per-message", "limit:1000"]) {
      await expectRefused({ budget_awareness: value }, [{ path: "budget_awareness", reason: expect.stringMatching(/per-message.*limit:<0-100>/) }]);
    }
    for (const value of ["per-message", "limit:0", "limit:100", "limit:42", null]) {
      expect((await expectAccepted({ budget_awareness: value })).budget_awareness).toBe(value);
    }
  });

  it("planning_model must be provider:model with both parts, and its provider configured", async () => {
    for (const value of ["gpt-4o", "openai:", ":x", "nope:model"]) {
      await expectRefused({ planning_model: value }, [{ path: "planning_model", reason: expect.stringMatching(/provider:model/) }]);
    }
    // No OPENAI_API_KEY in the test deployment.
    await expectRefused({ planning_model: "openai:gpt-x" }, [
      { path: "planning_model", reason: 'provider "openai" is not configured in this deployment: set the OPENAI_API_KEY secret' },
    ]);
    expect((await expectAccepted({ planning_model: "openai-compatible:planner" })).planning_model).toBe("openai-compatible:planner");
  });

  it("hitl_tools may only name tools of the agent", async () => {
    await expectRefused({ tools: ["calculator"], hitl_tools: ["clock"] }, [{ path: "hitl_tools.0", reason: '"clock" is not a tool of this agent' }]);
    await expectAccepted({ tools: ["calculator"], hitl_tools: ["calculator"] });
  });

  it("refuses duplicate tool names in tools, http_tools and handoffs", async () => {
    await expectRefused({ tools: ["calculator", "clock", "calculator"] }, [{ path: "tools.2", reason: 'duplicate tool name "calculator"' }]);
    await expectRefused(
      {
        http_tools: [
          { name: "hook", url: allowlisted("a") },
          { name: "hook", url: allowlisted("b") },
        ],
      },
      [{ path: "http_tools.1.name", reason: 'duplicate tool name "hook"' }],
    );
    const target = uniqueName("target");
    await createAgent({ name: target, model: "demo:x" });
    await expectRefused({ handoffs: [target, target] }, [{ path: "handoffs.1", reason: `duplicate handoff "${target}"` }]);
  });

  it("handoffs must name other registered agents", async () => {
    const ghost = uniqueName("ghost");
    await expectRefused({ handoffs: [ghost] }, [{ path: "handoffs.0", reason: `unknown agent "${ghost}"` }]);
    const self = uniqueName("self");
    await expectRefused({ name: self, handoffs: [self] }, [{ path: "handoffs.0", reason: "an agent cannot hand off to itself" }]);
    const target = uniqueName("target");
    await createAgent({ name: target, model: "demo:x" });
    expect((await expectAccepted({ handoffs: [target] })).handoffs).toEqual([target]);
  });

  it("injected_tool_args keys must be valid property names that clash with no tool parameter", async () => {
    await expectRefused({ tools: ["calculator"], injected_tool_args: { expression: "clashes" } }, [
      { path: "injected_tool_args.expression", reason: 'clashes with a parameter of tool "calculator"' },
    ]);
    await expectRefused(
      {
        http_tools: [{ name: "hook", url: allowlisted("h"), parameters: { type: "object", properties: { ticket: { type: "string" } } } }],
        injected_tool_args: { ticket: "clashes" },
      },
      [{ path: "injected_tool_args.ticket", reason: 'clashes with a parameter of tool "hook"' }],
    );
    // Handoff tools count too: theirs have a "reason" parameter.
    const target = uniqueName("target");
    await createAgent({ name: target, model: "demo:x" });
    await expectRefused({ handoffs: [target], injected_tool_args: { reason: "clashes" } }, [
      { path: "injected_tool_args.reason", reason: `clashes with a parameter of tool "transfer_to_${target}"` },
    ]);
    const ok = await expectAccepted({ tools: ["calculator"], injected_tool_args: { ui_request_id: "UI correlation id", _x: "y" } });
    expect(ok.injected_tool_args).toEqual({ ui_request_id: "UI correlation id", _x: "y" });
    for (const key of ["1bad", "has space", "a.b"]) {
      await expectRefused({ injected_tool_args: { [key]: "x" } }, [
        { path: `injected_tool_args.${key}`, reason: expect.stringMatching(/valid JSON property name/) },
      ]);
    }
  });

  it("output_schema must have a root of type object", async () => {
    for (const schema of [{ type: "string" }, { type: "array", items: {} }, { properties: { a: { type: "string" } } }]) {
      await expectRefused({ output_schema: schema }, [{ path: "output_schema", reason: expect.stringMatching(/type "object"/) }]);
    }
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    expect((await expectAccepted({ output_schema: schema })).output_schema).toEqual(schema);
  });

  it("budget values must be within the deployment caps (the raisable ones within its maxima); lower ones are kept", async () => {
    const over: [string, number, number][] = [
      ["max_depth", 4, 3],
      ["max_iterations_per_level", 21, 20],
      ["max_parallel_per_turn", 9, 8],
      ["max_total_subtasks", 33, 32],
      ["max_total_llm_calls", 1001, 1000],
      ["max_total_tool_calls", 5001, 5000],
      ["max_wall_clock_ms", 3_600_001, 3_600_000],
      ["max_tool_result_bytes", 50_001, 50_000],
      ["max_history_tokens", 128_001, 128_000],
    ];
    for (const [key, value, cap] of over) {
      await expectRefused({ budget: { [key]: value } }, [{ path: `budget.${key}`, reason: expect.stringContaining(String(cap)) }]);
    }
    const lower = { max_total_llm_calls: 5, max_depth: 1, max_wall_clock_ms: 60_000, max_tool_result_bytes: 1000 };
    expect((await expectAccepted({ budget: lower })).budget).toEqual(lower);
    const caps = Object.fromEntries(over.map(([key, , cap]) => [key, cap]));
    expect((await expectAccepted({ budget: caps })).budget).toEqual(caps);
  });

  it("refuses unknown fields, each named by its path", async () => {
    const unknown = "is not a known field";
    await expectRefused({ surprise: true }, [{ path: "surprise", reason: unknown }]);
    await expectRefused({ budget: { max_steps_total: 3 } }, [{ path: "budget.max_steps_total", reason: unknown }]);
    const name = uniqueName("unknown");
    const res = await api("PUT", `/v1/agents/${name}`, { model: "demo:x", surprise: true, other: 1 });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toHaveLength(2);
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { path: "surprise", reason: unknown },
        { path: "other", reason: unknown },
      ]),
    );
    expect((await api("GET", `/v1/agents/${name}`)).status).toBe(404);
  });

  it("an inline config reports type errors with the nested field path too", async () => {
    await expectRefused({ max_steps: "ten" }, [{ path: "max_steps", reason: expect.stringMatching(/number/) }]);
    await expectRefused({ http_tools: [{ name: "hook" }] }, [{ path: "http_tools.0.url", reason: expect.any(String) }]);
  });

  it("accepts MCP servers on the allowlist (their checks are in mcp.test.ts)", async () => {
    await expectAccepted({ mcp_servers: [{ name: "docs", url: allowlisted("mcp") }] });
    await expectAccepted({ mcp_servers: [], allow_parallel_subagents: true });
  });

  it("a refused replacement leaves the stored agent as it was", async () => {
    const name = uniqueName("keep");
    await createAgent({ name, model: "demo:x", max_steps: 4 });
    const res = await api("PUT", `/v1/agents/${name}`, { model: "demo:x", max_steps: 5, budget_awareness: "sometimes" });
    expect(res.status).toBe(422);
    expect((await api("GET", `/v1/agents/${name}`)).body).toEqual({ ...AGENT_DEFAULTS, name, model: "demo:x", max_steps: 4 });
  });

  it("PUT then GET round-trips exactly, with every default filled in", async () => {
    const minimal = uniqueName("min");
    const put = await api("PUT", `/v1/agents/${minimal}`, { model: "demo:x" });
    expect(put.status).toBe(201);
    expect(put.body).toEqual({ ...AGENT_DEFAULTS, name: minimal, model: "demo:x" });
    expect((await api("GET", `/v1/agents/${minimal}`)).body).toEqual(put.body);

    const target = uniqueName("target");
    await createAgent({ name: target, model: "demo:x" });
    const name = uniqueName("full");
    const full = {
      name,
      model: "openai-compatible:exec",
      fallback_models: ["openai-compatible:backup", "demo:last-resort"],
      first_token_timeout_ms: 5000,
      model_timeout_ms: 60_000,
      fallback_cooldown_ms: 30_000,
      instructions: "Be exact.",
      tools: ["calculator", "clock"],
      http_tools: [
        {
          name: "lookup",
          description: "Looks things up",
          parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
          url: allowlisted("lookup"),
          permission_class: "knowledge",
          parallel_safe: false,
          timeout_ms: 5000,
        },
      ],
      mcp_servers: [],
      handoffs: [target],
      output_schema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
      max_steps: 7,
      temperature: 0.2,
      max_tokens: 512,
      planning_enabled: true,
      planning_model: "demo:planner",
      planning_instructions: "Plan briefly.",
      budget_awareness: "limit:80",
      context_window: 32_000,
      hitl_tools: ["lookup"],
      approval_timeout_ms: 60_000,
      emit_mcp_progress: false,
      injected_tool_args: { ui_request_id: "UI correlation id" },
      allow_parallel_subagents: false,
      max_parallel_subagents: 5,
      budget: { max_total_llm_calls: 20, max_wall_clock_ms: 60_000 },
    };
    const created = await api("PUT", `/v1/agents/${name}`, full);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual(full);
    expect((await api("GET", `/v1/agents/${name}`)).body).toEqual(full);
    // Putting back what GET returned changes nothing.
    const again = await api("PUT", `/v1/agents/${name}`, (await api("GET", `/v1/agents/${name}`)).body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(full);
    // An inline config is stored the same way.
    const sid = await createSession({ name: "inline-min", model: "demo:x" });
    expect((await api("GET", `/v1/sessions/${sid}`)).body.agent).toEqual({ ...AGENT_DEFAULTS, name: "inline-min", model: "demo:x" });
  });
});

describe("planner phase", () => {
  it("plans first (planner instructions, tool schemas, no tool use), then the executor gets the task with the plan and none of the planner's messages", async () => {
    const plan = "1. Use calculator on 6 * 7.\n2. Report the result.";
    const { model, scriptId } = await scripted([{ text: plan }, { text: "It is 42." }, { text: "1. Say hi." }, { text: "Hi again." }], "plan");
    const sid = await createSession({
      name: "planner",
      model,
      tools: ["calculator"],
      instructions: "EXECUTOR-INSTRUCTIONS",
      planning_enabled: true,
      planning_instructions: "PLANNER-INSTRUCTIONS",
    });
    const t1 = await submitTurn(sid, "What is 6 * 7?");
    const log = await waitForTurnEnd(sid, t1.turn_id);
    expectGapless(log);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "It is 42.", stop_reason: "final_answer" } });

    const [planner, executor] = await requests(scriptId);
    // The planner: its own instructions, the task, the same tool schemas, and no tool use.
    expect(planner.messages[0].role).toBe("system");
    expect(text(planner.messages[0])).toContain("PLANNER-INSTRUCTIONS");
    expect(text(planner.messages[0])).not.toContain("EXECUTOR-INSTRUCTIONS");
    expect(planner.messages.slice(1)).toEqual([{ role: "user", content: "What is 6 * 7?" }]);
    expect(planner.tools.map((t: any) => t.function.name)).toEqual(["calculator"]);
    expect(planner.tool_choice).toBe("none");
    // The executor: its own instructions, and one user message with the task and the plan.
    expect(executor.messages[0]).toEqual({ role: "system", content: "EXECUTOR-INSTRUCTIONS" });
    expect(roles(executor)).toEqual(["system", "user"]);
    expect(text(executor.messages[1])).toContain("What is 6 * 7?");
    expect(text(executor.messages[1])).toContain(plan);
    expect(JSON.stringify(executor.messages)).not.toContain("PLANNER-INSTRUCTIONS");
    expect(executor.tools.map((t: any) => t.function.name)).toEqual(["calculator"]);
    expect(executor.tool_choice).not.toBe("none");
    expect(executor.tools).toEqual(planner.tools);

    // The log: planner call, the plan as reasoning.summary, then the executor call; no planner deltas.
    const turnLog = log.filter((e) => e.turn_id === t1.turn_id);
    expect(ofType(turnLog, "model.requested").map((e) => e.payload.phase)).toEqual(["planner", "executor"]);
    expect(ofType(turnLog, "model.requested").map((e) => e.payload.model)).toEqual([model, model]);
    const summary = ofType(turnLog, "reasoning.summary");
    expect(summary.map((e) => e.payload)).toEqual([{ kind: "plan", text: plan }]);
    const plannerAt = indexOf(turnLog, (e) => e.type === "model.requested" && e.payload.phase === "planner");
    const summaryAt = indexOf(turnLog, (e) => e.type === "reasoning.summary");
    const executorAt = indexOf(turnLog, (e) => e.type === "model.requested" && e.payload.phase === "executor");
    expect(plannerAt).toBeLessThan(summaryAt);
    expect(summaryAt).toBeLessThan(executorAt);
    expect(
      ofType(turnLog, "model.delta")
        .map((e) => e.payload.text)
        .join(""),
    ).toBe("It is 42.");

    // A later turn: the stored history has the original input only, neither the plan nor the planner's turns.
    const t2 = await submitTurn(sid, "Say hi.");
    await waitForTurnEnd(sid, t2.turn_id);
    const [, , planner2, executor2] = await requests(scriptId);
    for (const req of [planner2, executor2]) {
      expect(req.messages.slice(1, 3)).toEqual([
        { role: "user", content: "What is 6 * 7?" },
        { role: "assistant", content: "It is 42." },
      ]);
      expect(JSON.stringify(req.messages)).not.toContain("Use calculator on 6 * 7");
    }
    expect(JSON.stringify(executor2.messages)).not.toContain("PLANNER-INSTRUCTIONS");
    expect(roles(executor2)).toEqual(["system", "user", "assistant", "user"]);
    expect(text(executor2.messages[3])).toContain("Say hi.");
    expect(text(executor2.messages[3])).toContain("1. Say hi.");
  });

  it("uses planning_model for the planner only, and the executor's instructions when planning_instructions is empty", async () => {
    const planScript = await scripted([{ text: "1. Answer directly." }], "planm");
    const execScript = await scripted([{ text: "Done." }], "exec");
    const sid = await createSession({
      name: "planner-model",
      model: execScript.model,
      instructions: "EXECUTOR-INSTRUCTIONS",
      planning_enabled: true,
      planning_model: planScript.model,
    });
    const { turn_id } = await submitTurn(sid, "Do it.");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1).type).toBe("turn.completed");
    const planReqs = await requests(planScript.scriptId);
    const execReqs = await requests(execScript.scriptId);
    expect(planReqs).toHaveLength(1);
    expect(execReqs).toHaveLength(1);
    expect(text(planReqs[0].messages[0])).toContain("EXECUTOR-INSTRUCTIONS");
    expect(text(execReqs[0].messages[1])).toContain("1. Answer directly.");
    expect(ofType(log, "model.requested").map((e) => [e.payload.phase, e.payload.model])).toEqual([
      ["planner", planScript.model],
      ["executor", execScript.model],
    ]);
  });

  it("an empty plan leaves the input as it was and emits no reasoning.summary", async () => {
    const { model, scriptId } = await scripted([{ text: "   " }, { text: "Done." }], "plane");
    const sid = await createSession({ name: "planner-empty", model, planning_enabled: true });
    const { turn_id } = await submitTurn(sid, "Just do it.");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1).type).toBe("turn.completed");
    expect(ofType(log, "reasoning.summary")).toEqual([]);
    expect(ofType(log, "model.requested").map((e) => e.payload.phase)).toEqual(["planner", "executor"]);
    const executor = (await requests(scriptId))[1];
    expect(executor.messages).toEqual([{ role: "user", content: "Just do it." }]);
  });
});

describe("budget awareness", () => {
  const ADVISORY = /\[Context budget: about \d+ of 4096 tokens used \(\d+%\), about \d+ remaining\.\]/g;

  it("per-message: the advisory is appended to every assistant message and tool result the model gets back", async () => {
    const { model, scriptId } = await scripted(
      [{ text: "Computing.", tool_calls: [{ name: "calculator", arguments: { expression: "2 + 2" } }] }, { text: "It is 4." }, { text: "Bye." }],
      "pm",
    );
    const sid = await createSession({ name: "per-message", model, tools: ["calculator"], budget_awareness: "per-message", context_window: 4096 });
    const t1 = await submitTurn(sid, "What is 2 + 2?");
    const log = await waitForTurnEnd(sid, t1.turn_id);
    expect(log.at(-1).payload.output).toBe("It is 4.");
    const [first, second] = await requests(scriptId);
    expect(JSON.stringify(first.messages)).not.toContain("Context budget");
    expect(roles(second)).toEqual(["user", "assistant", "tool"]);
    const assistant = text(second.messages[1]);
    expect(assistant.startsWith("Computing.")).toBe(true);
    expect(assistant.match(ADVISORY)).toHaveLength(1);
    const tool = second.messages[2].content as string;
    expect(tool).toMatch(/^4\n\[Context budget: about \d+ of 4096 tokens used \(\d+%\), about \d+ remaining\.\]$/);
    // The events and the stored history keep the tool's own output.
    expect(ofType(log, "tool.result")[0].payload.output).toBe("4");

    // A later turn: every earlier assistant message and tool result carries exactly one (fresh) advisory.
    const t2 = await submitTurn(sid, "Thanks.");
    await waitForTurnEnd(sid, t2.turn_id);
    const third = (await requests(scriptId))[2];
    expect(roles(third)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(text(third.messages[1]).match(ADVISORY)).toHaveLength(1);
    expect((third.messages[2].content as string).match(ADVISORY)).toHaveLength(1);
    expect(text(third.messages[3]).startsWith("It is 4.")).toBe(true);
    expect(text(third.messages[3]).match(ADVISORY)).toHaveLength(1);
    expect(third.messages[4]).toEqual({ role: "user", content: "Thanks." });
  });

  it("limit:N compacts older turns with a model call before the executor call when the prompt is over N% of the window", async () => {
    const long1 = `first ${"a".repeat(1600)}`;
    const long2 = `second ${"b".repeat(1600)}`;
    const { model, scriptId } = await scripted([{ text: "ok1" }, { text: "ok2" }, { text: "SUMMARY-OF-TURN-ONE" }, { text: "ok3" }, { text: "ok4" }], "lim");
    const sid = await createSession({ name: "limit", model, budget_awareness: "limit:50", context_window: 2048 });
    for (const input of [long1, long2]) {
      const t = await submitTurn(sid, input);
      const log = await waitForTurnEnd(sid, t.turn_id);
      expect(ofType(log, "context.compaction.started")).toEqual([]);
    }
    const t3 = await submitTurn(sid, `third ${"c".repeat(1000)}`);
    const log = await waitForTurnEnd(sid, t3.turn_id);
    expectGapless(log);
    const turnLog = log.filter((e) => e.turn_id === t3.turn_id);
    expect(turnLog.at(-1).payload).toMatchObject({ output: "ok3", stop_reason: "final_answer" });
    expect(types(turnLog).filter((t) => t !== "model.delta")).toEqual([
      "turn.submitted",
      "turn.started",
      "tool.catalog.resolved",
      "context.compaction.started",
      "model.requested",
      "model.completed",
      "cost.recorded",
      "context.compaction.completed",
      "model.requested",
      "model.completed",
      "cost.recorded",
      "turn.completed",
    ]);
    expect(ofType(turnLog, "model.requested").map((e) => e.payload.phase)).toEqual(["compaction", "executor"]);
    const started = ofType(turnLog, "context.compaction.started")[0].payload;
    const completed = ofType(turnLog, "context.compaction.completed")[0].payload;
    expect(completed.before_tokens).toBe(started.before_tokens);
    expect(completed.before_tokens).toBeGreaterThan(1024);
    expect(completed.after_tokens).toBeLessThanOrEqual(1024);
    expect(completed.before_tokens).toBeGreaterThan(completed.after_tokens);

    const reqs = await requests(scriptId);
    expect(reqs).toHaveLength(4);
    const [compaction, executor] = reqs.slice(2);
    // The compaction call summarizes the older turn, not the recent one.
    expect(JSON.stringify(compaction.messages)).toContain(long1);
    expect(JSON.stringify(compaction.messages)).not.toContain(long2);
    expect(compaction.tools).toBeUndefined();
    // The executor gets the summary, the recent turn verbatim, and the new input.
    expect(JSON.stringify(executor.messages)).not.toContain(long1);
    expect(JSON.stringify(executor.messages)).toContain("SUMMARY-OF-TURN-ONE");
    expect(executor.messages.slice(-3)).toEqual([
      { role: "user", content: long2 },
      { role: "assistant", content: "ok2" },
      { role: "user", content: `third ${"c".repeat(1000)}` },
    ]);

    // The compacted history is what later turns see.
    const t4 = await submitTurn(sid, "fourth");
    await waitForTurnEnd(sid, t4.turn_id);
    const fourth = (await requests(scriptId))[4];
    expect(JSON.stringify(fourth.messages)).not.toContain(long1);
    expect(JSON.stringify(fourth.messages)).toContain("SUMMARY-OF-TURN-ONE");
    expect(fourth.messages.at(-1)).toEqual({ role: "user", content: "fourth" });
  });

  it("limit:N ends the turn with budget_limit, without an executor call, when compaction is not enough", async () => {
    const { model, scriptId } = await scripted([{ text: "ok1" }, { text: "ok2" }, { text: "SUMMARY" }], "limx");
    const sid = await createSession({ name: "limit-over", model, budget_awareness: "limit:50", context_window: 2048 });
    for (const input of ["one", "two"]) await waitForTurnEnd(sid, (await submitTurn(sid, input)).turn_id);
    const t3 = await submitTurn(sid, "x".repeat(6000));
    const log = await waitForTurnEnd(sid, t3.turn_id);
    const turnLog = log.filter((e) => e.turn_id === t3.turn_id);
    expect(ofType(turnLog, "model.requested").map((e) => e.payload.phase)).toEqual(["compaction"]);
    expect(types(turnLog).slice(-2)).toEqual(["context.compaction.completed", "turn.completed"]);
    expect(turnLog.at(-1).payload).toMatchObject({ stop_reason: "budget_limit", output: expect.stringMatching(/context budget/) });
    expect(await requests(scriptId)).toHaveLength(3);
  });

  it("limit:0 ends the turn with stop_reason budget_limit and a fixed message, with no model call", async () => {
    const { model, scriptId } = await scripted([{ text: "never" }], "lim0");
    const sid = await createSession({ name: "limit-zero", model, budget_awareness: "limit:0" });
    const { turn_id } = await submitTurn(sid, "hello");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(types(log, turn_id)).toEqual(["turn.submitted", "turn.started", "tool.catalog.resolved", "turn.completed"]);
    const done = log.at(-1);
    expect(done.payload.stop_reason).toBe("budget_limit");
    expect(typeof done.payload.output).toBe("string");
    expect(done.payload.output.length).toBeGreaterThan(0);
    expect(await requests(scriptId)).toEqual([]);
    const thread = await api("GET", `/v1/sessions/${sid}/thread`);
    expect(thread.body).toMatchObject({ status: "idle", last_outcome: { turn_id, type: "turn.completed", stop_reason: "budget_limit" } });

    // The message is fixed: another session ends with the same text.
    const sid2 = await createSession({ name: "limit-zero-2", model, budget_awareness: "limit:0" });
    const t2 = await submitTurn(sid2, "something else entirely");
    expect((await waitForTurnEnd(sid2, t2.turn_id)).at(-1).payload.output).toBe(done.payload.output);
  });
});

describe("injected tool args", () => {
  it("adds them to every tool schema sent to the model, splits them off before the tool runs, and records them", async () => {
    const echoParams = { type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false };
    const { model, scriptId } = await scripted(
      [
        {
          tool_calls: [
            { name: "echo", arguments: { q: "ping", ui_request_id: "ui-42" } },
            { name: "calculator", arguments: { expression: "1 + 1" } },
            { name: "broken", arguments: { ui_request_id: "ui-7" } },
          ],
        },
        { text: "done" },
      ],
      "inj",
    );
    const sid = await createSession({
      name: "injected",
      model,
      tools: ["calculator"],
      http_tools: [
        { name: "echo", url: toolURL("echo"), description: "Echoes", parameters: echoParams },
        { name: "broken", url: toolURL("fail") },
      ],
      injected_tool_args: { ui_request_id: "UI correlation id" },
    });
    const { turn_id } = await submitTurn(sid, "ping it");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1).type).toBe("turn.completed");

    const [first] = await requests(scriptId);
    const sent = Object.fromEntries(first.tools.map((t: any) => [t.function.name, t.function.parameters]));
    expect(Object.keys(sent).sort()).toEqual(["broken", "calculator", "echo"]);
    expect(sent.broken).toEqual({ type: "object", properties: { ui_request_id: { type: "string", description: "UI correlation id" } } });
    expect(sent.echo).toEqual({
      type: "object",
      properties: { q: { type: "string" }, ui_request_id: { type: "string", description: "UI correlation id" } },
      required: ["q"],
      additionalProperties: false,
    });
    expect(sent.calculator.properties.ui_request_id).toEqual({ type: "string", description: "UI correlation id" });
    expect(sent.calculator.required).toEqual(["expression"]);
    // The tools' own schemas are not changed.
    const inventory = await api("GET", `/v1/sessions/${sid}/tools`);
    const own = Object.fromEntries(inventory.body.tools.map((t: any) => [t.name, t.parameters]));
    expect(own.echo).toEqual(echoParams);
    expect(own.calculator.properties).not.toHaveProperty("ui_request_id");

    const echoStarted = log.find((e) => e.type === "tool.started" && e.payload.name === "echo");
    expect(echoStarted.payload).toEqual({ name: "echo", args: { q: "ping" }, injected_args: { ui_request_id: "ui-42" } });
    const echoResult = log.find((e) => e.type === "tool.result" && e.payload.name === "echo");
    expect(echoResult.payload.is_error).toBe(false);
    const meta = echoResult.payload.metadata;
    expect(meta).toEqual({
      status: "success",
      started_at: expect.any(Number),
      completed_at: expect.any(Number),
      execution_time_ms: meta.completed_at - meta.started_at,
      approval_status: "not_required",
      approval_id: null,
      injected_args: { ui_request_id: "ui-42" },
      offloaded_artifact_id: null,
      receipt: { idempotency_key: expect.stringMatching(/^idk_/), status: 200, attempts: 1 },
    });
    expect(meta.completed_at).toBeGreaterThanOrEqual(meta.started_at);
    // The webhook got the executable args only.
    const hook = (await toolRequests()).find((r: any) => r.tool_call_id === echoResult.tool_call_id);
    expect(hook).toEqual({ tool: "echo", args: { q: "ping" }, session_id: sid, turn_id, tool_call_id: echoResult.tool_call_id });
    expect(echoResult.payload.output.received.args).toEqual({ q: "ping" });

    // A call without the injected arg records an empty set.
    const calcStarted = log.find((e) => e.type === "tool.started" && e.payload.name === "calculator");
    expect(calcStarted.payload).toEqual({ name: "calculator", args: { expression: "1 + 1" }, injected_args: {} });
    const calcResult = log.find((e) => e.type === "tool.result" && e.payload.name === "calculator");
    expect(calcResult.payload).toMatchObject({ output: "2", is_error: false, metadata: { status: "success", injected_args: {} } });
    // A failing tool: an error result whose metadata records the injected values too.
    const broken = log.find((e) => e.type === "tool.result" && e.payload.name === "broken");
    expect(broken.payload).toMatchObject({ is_error: true, output: "HTTP 500: tool exploded" });
    expect(broken.payload.metadata).toEqual({
      status: "error",
      started_at: expect.any(Number),
      completed_at: expect.any(Number),
      execution_time_ms: broken.payload.metadata.completed_at - broken.payload.metadata.started_at,
      approval_status: "not_required",
      approval_id: null,
      injected_args: { ui_request_id: "ui-7" },
      offloaded_artifact_id: null,
      receipt: { idempotency_key: expect.stringMatching(/^idk_/), status: 500, attempts: 1 },
    });
    const brokenHook = (await toolRequests()).find((r: any) => r.tool_call_id === broken.tool_call_id);
    expect(brokenHook.args).toEqual({});
  });
});

describe("live message injection", () => {
  const slowAgent = (model: string) => ({
    name: "injectable",
    model,
    http_tools: [{ name: "slow", url: toolURL("slow?ms=800"), timeout_ms: 5000 }],
  });

  it("POST /messages during a tool: 202 injected; message.injected after the tool result and before the next model call, FIFO", async () => {
    const { model, scriptId } = await scripted([{ tool_calls: [{ name: "slow", arguments: {} }] }, { text: "Noted both." }], "injp");
    const sid = await createSession(slowAgent(model));
    const { turn_id } = await submitTurn(sid, "run the slow tool");
    await waitForEvent(sid, (e) => e.type === "tool.started" && e.turn_id === turn_id);
    const first = await api("POST", `/v1/sessions/${sid}/messages`, { content: "first extra" });
    const second = await api("POST", `/v1/sessions/${sid}/messages`, { content: "second extra" });
    for (const res of [first, second]) {
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body).toEqual({ delivery: "injected", turn_id, message_id: expect.any(String) });
    }
    expect(first.body.message_id).not.toBe(second.body.message_id);

    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Noted both." } });
    const injected = ofType(log, "message.injected");
    expect(injected.map((e) => [e.turn_id, e.payload.message_id, e.payload.content])).toEqual([
      [turn_id, first.body.message_id, "first extra"],
      [turn_id, second.body.message_id, "second extra"],
    ]);
    const resultAt = indexOf(log, (e) => e.type === "tool.result");
    const injectedAt = indexOf(log, (e) => e.type === "message.injected");
    const nextCallAt = log.findIndex((e, i) => i > resultAt && e.type === "model.requested");
    expect(resultAt).toBeLessThan(injectedAt);
    expect(injectedAt).toBeLessThan(nextCallAt);
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);

    const reqs = await requests(scriptId);
    expect(reqs).toHaveLength(2);
    expect(roles(reqs[1])).toEqual(["user", "assistant", "tool", "user", "user"]);
    expect(reqs[1].messages.slice(3)).toEqual([
      { role: "user", content: "first extra" },
      { role: "user", content: "second extra" },
    ]);

    // The injected messages stay in the conversation for later turns.
    await script(scriptId, [{ text: "later" }]);
    const t2 = await submitTurn(sid, "and now?");
    await waitForTurnEnd(sid, t2.turn_id);
    const later = (await requests(scriptId))[0];
    expect(later.messages.map((m: any) => text(m)).filter((t: string) => t.includes("extra"))).toEqual(["first extra", "second extra"]);
  });

  it("a message that arrives during the model's final answer makes the model go on with it", async () => {
    const { model, scriptId } = await scripted([{ text: "A slow first answer.", chunk_size: 2, delay_ms: 60 }, { text: "Answer to the follow-up." }], "injm");
    const sid = await createSession({ name: "injectable-answer", model });
    const { turn_id } = await submitTurn(sid, "question");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === turn_id);
    const res = await api("POST", `/v1/sessions/${sid}/messages`, { content: "follow-up" });
    expect(res.body).toEqual({ delivery: "injected", turn_id, message_id: expect.any(String) });
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1).payload.output).toBe("Answer to the follow-up.");
    const reqs = await requests(scriptId);
    expect(reqs[1].messages).toEqual([
      { role: "user", content: "question" },
      { role: "assistant", content: "A slow first answer." },
      { role: "user", content: "follow-up" },
    ]);
  });

  it("a message that arrives too late for the turn (max_steps reached) is not lost: it becomes the next turn", async () => {
    const { model, scriptId } = await scripted(
      [{ text: "Calling a tool.", chunk_size: 2, delay_ms: 50, tool_calls: [{ name: "slow", arguments: {} }] }, { text: "Handled the late message." }],
      "injl",
    );
    const sid = await createSession({ ...slowAgent(model), name: "injectable-late", max_steps: 1 });
    const { turn_id } = await submitTurn(sid, "go");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.turn_id === turn_id);
    const res = await api("POST", `/v1/sessions/${sid}/messages`, { content: "too late" });
    expect(res.body).toEqual({ delivery: "injected", turn_id, message_id: expect.any(String) });
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.find((e) => e.turn_id === turn_id && e.type === "turn.completed").payload.stop_reason).toBe("max_steps");
    const next = log.find((e) => e.type === "turn.submitted" && e.turn_id !== turn_id);
    expect(next.payload).toMatchObject({ input: "too late", queued: true, message_id: res.body.message_id });
    const after = await waitForTurnEnd(sid, next.turn_id);
    expectGapless(after);
    expect(after.at(-1)).toMatchObject({ type: "turn.completed", turn_id: next.turn_id, payload: { output: "Handled the late message." } });
    expect((await requests(scriptId))[1].messages.at(-1)).toEqual({ role: "user", content: "too late" });
  });

  it("refuses empty or whitespace content with 422, changing nothing", async () => {
    const sid = await createSession({ name: "inject-empty", model: "demo:x" });
    const before = await events(sid);
    for (const body of [{ content: "" }, { content: "   \n\t" }, {}, { content: 3 }]) {
      const res = await api("POST", `/v1/sessions/${sid}/messages`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.code).toBe("validation_failed");
      expect(res.body.error.details.map((d: Detail) => d.path)).toEqual(["content"]);
    }
    expect(await events(sid)).toEqual(before);
  });

  it("with no running turn the message becomes a new turn, and the reply says so", async () => {
    const { model, scriptId } = await scripted([{ text: "Hello there." }], "injn");
    const sid = await createSession({ name: "inject-idle", model });
    const res = await api("POST", `/v1/sessions/${sid}/messages`, { content: "hi from injection" });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ delivery: "new_turn", turn_id: expect.stringMatching(/^trn_/), status: "accepted" });
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    expect(log.find((e) => e.type === "turn.submitted").payload).toMatchObject({ input: "hi from injection", queued: false });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", turn_id: res.body.turn_id, payload: { output: "Hello there." } });
    expect(ofType(log, "message.injected")).toEqual([]);
    expect((await requests(scriptId))[0].messages).toEqual([{ role: "user", content: "hi from injection" }]);
  });

  it("the inject_message WebSocket frame works the same and replies ok", async () => {
    const { model, scriptId } = await scripted([{ tool_calls: [{ name: "slow", arguments: {} }] }, { text: "Got it." }, { text: "New turn." }], "injw");
    const sid = await createSession(slowAgent(model));
    const ws = await openWs(sid);
    const submitted = await ws.command({ type: "submit_turn", input: "run it", request_id: "s1" });
    expect(submitted.ok).toBe(true);
    const turn_id = submitted.result.turn_id as string;
    await ws.waitForEvent((e) => e.type === "tool.started" && e.turn_id === turn_id, "tool.started");

    const empty = await ws.command({ type: "inject_message", content: "  ", request_id: "e1" });
    expect(empty).toMatchObject({ type: "reply", request_id: "e1", ok: false, error: { code: "validation_failed" } });
    const reply = await ws.command({ type: "inject_message", content: "from the socket", request_id: "i1" });
    expect(reply).toEqual({ type: "reply", request_id: "i1", ok: true, result: { delivery: "injected", turn_id, message_id: expect.any(String) } });

    const done = await ws.waitForTurnEnd(turn_id);
    expect(done.type).toBe("turn.completed");
    const injected = ws.events.filter((e) => e.type === "message.injected");
    expect(injected.map((e) => e.payload)).toEqual([{ message_id: reply.result.message_id, content: "from the socket" }]);
    const resultAt = ws.events.findIndex((e) => e.type === "tool.result");
    const injectedAt = ws.events.findIndex((e) => e.type === "message.injected");
    const nextCallAt = ws.events.findIndex((e, i) => i > resultAt && e.type === "model.requested");
    expect(resultAt).toBeGreaterThanOrEqual(0);
    expect(resultAt).toBeLessThan(injectedAt);
    expect(injectedAt).toBeLessThan(nextCallAt);
    expect((await requests(scriptId))[1].messages.at(-1)).toEqual({ role: "user", content: "from the socket" });

    // Idle: the frame starts a new turn.
    const idle = await ws.command({ type: "inject_message", content: "a new one", request_id: "i2" });
    expect(idle).toEqual({ type: "reply", request_id: "i2", ok: true, result: { delivery: "new_turn", turn_id: expect.any(String), status: "accepted" } });
    const end = await ws.waitForTurnEnd(idle.result.turn_id);
    expect(end.payload.output).toBe("New turn.");
    expect(ws.events.map((e) => e.sequence)).toEqual(ws.events.map((_, i) => i + 1));
  });
});

describe("handoffs", () => {
  it("transfer_to_<name> switches the session's agent for the rest of the turn and later turns", async () => {
    const id = suffix();
    const billing = `billing-${id}`;
    const front = `front-${id}`;
    const b = await scripted([{ text: "Billing here: your invoice is paid." }, { text: "Still billing." }], "hb");
    const a = await scripted([{ text: "Passing you on.", tool_calls: [{ name: `transfer_to_${billing}`, arguments: { reason: "invoice question" } }] }], "ha");
    // Billing's newest version is 2: the session reports it after the handoff.
    await createAgent({ name: billing, model: b.model, instructions: "OLD-BILLING-INSTRUCTIONS" });
    await createAgent({ name: billing, model: b.model, instructions: "BILLING-INSTRUCTIONS" });
    await createAgent({ name: front, model: a.model, instructions: "FRONT-INSTRUCTIONS", handoffs: [billing] });
    const sid = await createSession(front);

    const tools = await api("GET", `/v1/sessions/${sid}/tools`);
    expect(tools.body.tools.map((t: any) => t.name)).toEqual([`transfer_to_${billing}`]);

    const t1 = await submitTurn(sid, "Is my invoice paid?");
    const log = await waitForTurnEnd(sid, t1.turn_id);
    expectGapless(log);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Billing here: your invoice is paid.", stop_reason: "final_answer" } });
    const handoff = ofType(log, "run.status").filter((e) => e.payload.phase === "handoff");
    expect(handoff).toHaveLength(1);
    expect(handoff[0]).toMatchObject({ turn_id: t1.turn_id, payload: { phase: "handoff", from: front, to: billing, to_version: 2 } });
    const result = log.find((e) => e.type === "tool.result");
    expect(result.payload).toMatchObject({ name: `transfer_to_${billing}`, is_error: false });
    expect(ofType(log, "tool.started")[0].payload).toEqual({ name: `transfer_to_${billing}`, args: { reason: "invoice question" }, injected_args: {} });
    expect(indexOf(log, (e) => e === handoff[0])).toBeLessThan(indexOf(log, (e) => e === result));
    expect(ofType(log, "model.requested").map((e) => e.payload.model)).toEqual([a.model, b.model]);

    const aReqs = await requests(a.scriptId);
    const bReqs = await requests(b.scriptId);
    expect(aReqs).toHaveLength(1);
    expect(bReqs).toHaveLength(1);
    expect(aReqs[0].messages[0]).toEqual({ role: "system", content: "FRONT-INSTRUCTIONS" });
    // The target continues the same turn with its own instructions and the conversation so far.
    expect(bReqs[0].messages[0]).toEqual({ role: "system", content: "BILLING-INSTRUCTIONS" });
    expect(roles(bReqs[0])).toEqual(["system", "user", "assistant", "tool"]);
    expect(bReqs[0].messages[1]).toEqual({ role: "user", content: "Is my invoice paid?" });

    const snap = await api("GET", `/v1/sessions/${sid}`);
    expect(snap.body.agent.name).toBe(billing);
    expect(snap.body.agent.model).toBe(b.model);
    expect(snap.body.agent_version).toBe(2);
    for (let i = 0; (await api("GET", `/v1/sessions?agent=${billing}`)).body.sessions[0]?.agent_version !== 2; i++) {
      if (i > 100) throw new Error("the index never reported the version handed to");
      await new Promise((r) => setTimeout(r, 50));
    }

    // The switch is durable: it survives the session object restarting.
    await evictDurableObject(env.SESSIONS.get(env.SESSIONS.idFromName(sid)));
    expect((await api("GET", `/v1/sessions/${sid}`)).body.agent.name).toBe(billing);
    const t2 = await submitTurn(sid, "Thanks, anything else?");
    const log2 = await waitForTurnEnd(sid, t2.turn_id);
    expect(log2.at(-1).payload.output).toBe("Still billing.");
    expect(log2.find((e) => e.type === "turn.started" && e.turn_id === t2.turn_id).payload).toMatchObject({ agent: billing, model: b.model });
    expect(await requests(a.scriptId)).toHaveLength(1);
    const bReqs2 = await requests(b.scriptId);
    expect(bReqs2).toHaveLength(2);
    expect(bReqs2[1].messages[0]).toEqual({ role: "system", content: "BILLING-INSTRUCTIONS" });
    expect(bReqs2[1].messages.at(-1)).toEqual({ role: "user", content: "Thanks, anything else?" });
  });
});

describe("output_schema", () => {
  const schema = {
    type: "object",
    properties: { answer: { type: "string" }, score: { type: "number" } },
    required: ["answer", "score"],
    additionalProperties: false,
  };

  it("a valid JSON answer completes with the parsed object as output; the request asks for JSON output", async () => {
    const { model, scriptId } = await scripted([{ text: '{"answer":"yes","score":3}' }], "out");
    const sid = await createSession({ name: "structured", model, output_schema: schema });
    const { turn_id } = await submitTurn(sid, "Rate it.");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: { answer: "yes", score: 3 }, stop_reason: "final_answer" } });
    expect(ofType(log, "runtime.warning")).toEqual([]);

    // The provider's structured-output mode carries the schema; the system message states it too.
    const [req] = await requests(scriptId);
    expect(req.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "final_answer", schema } });
    expect(req.messages[0].role).toBe("system");
    expect(text(req.messages[0])).toContain(JSON.stringify(schema));

    // The session snapshot's turn summary previews the output (the event carries it whole).
    const snap = await api("GET", `/v1/sessions/${sid}`);
    expect(snap.body.turns.find((t: any) => t.turn_id === turn_id).output_preview).toBe('{"answer":"yes","score":3}');
  });

  it("an invalid answer is retried with a correction, then a valid one completes after a runtime.warning", async () => {
    const { model, scriptId } = await scripted([{ text: "Sure! The answer is yes." }, { text: '{"answer":"yes","score":1.5}' }], "outr");
    const sid = await createSession({ name: "structured-retry", model, output_schema: schema });
    const { turn_id } = await submitTurn(sid, "Rate it.");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: { answer: "yes", score: 1.5 } } });
    const warnings = ofType(log, "runtime.warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0].payload.attempt).toBe(1);
    expect(indexOf(log, (e) => e.type === "runtime.warning")).toBeLessThan(log.findLastIndex((e) => e.type === "model.requested"));
    const reqs = await requests(scriptId);
    expect(reqs).toHaveLength(2);
    expect(roles(reqs[1]).slice(-3)).toEqual(["user", "assistant", "user"]);
    expect(reqs[1].messages.at(-2)).toEqual({ role: "assistant", content: "Sure! The answer is yes." });
    expect(text(reqs[1].messages.at(-1))).toMatch(/JSON/);
  });

  it("three invalid answers end the turn with turn.failed output_invalid", async () => {
    const { model, scriptId } = await scripted(
      [{ text: '{"answer":1,"score":2}' }, { text: "not json" }, { text: '{"answer":"x"}' }, { text: "unused" }],
      "outf",
    );
    const sid = await createSession({ name: "structured-fail", model, output_schema: schema });
    const { turn_id } = await submitTurn(sid, "Rate it.");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(ofType(log, "runtime.warning").map((e) => e.payload.attempt)).toEqual([1, 2]);
    const failed = log.at(-1);
    expect(failed.type).toBe("turn.failed");
    expect(failed.payload.error.code).toBe("output_invalid");
    expect(failed.payload.error.message).toMatch(/output_schema/);
    expect(await requests(scriptId)).toHaveLength(3);
    const thread = await api("GET", `/v1/sessions/${sid}/thread`);
    expect(thread.body.last_outcome).toMatchObject({ turn_id, type: "turn.failed", error: { code: "output_invalid" } });
  });
});
