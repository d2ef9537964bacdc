// agent_orchestrate end to end through the public surface: an orchestrating agent on the
// fake model server calls the tool with a plan (or a prompt its planner call turns into one); every agent step
// runs a registered agent as its own child session, whose id is the step's exec_id and which is readable on
// its own. Covers the binding flow, parallel collect and first_success, failing steps, plan validation, the
// planner path, the depth limit, per-step timeouts and cancellation of the parent turn.
import { describe, expect, it } from "vitest";
import { api, createAgent, createSession, events, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, uniqueId } from "../../support/fake-model";

const CALL = "orc_1";
const TERMINAL = ["turn.completed", "turn.failed", "turn.cancelled"];

/** A registered agent answering from its own script (so its answers do not depend on timing). */
async function stepAgent(label: string, steps: Step[], config: Record<string, unknown> = {}): Promise<{ name: string; scriptId: string }> {
  const scriptId = uniqueId(label);
  await script(scriptId, steps);
  const name = `${label}-${crypto.randomUUID().slice(0, 8)}`;
  await createAgent({ name, model: `openai-compatible:${scriptId}`, instructions: `The ${label} agent.`, ...config });
  return { name, scriptId };
}

const orchestrateCall = (args: Record<string, unknown>, id = CALL) => ({ id, name: "agent_orchestrate", arguments: args });

/** An inline orchestrating agent whose model makes one agent_orchestrate call with `args` (then, if given, a planner answer), then answers. */
async function orchestrator(args: Record<string, unknown>, plannerAnswer?: string) {
  const scriptId = uniqueId("orchestrator");
  await script(scriptId, [{ tool_calls: [orchestrateCall(args)] }, ...(plannerAnswer !== undefined ? [{ text: plannerAnswer }] : []), { text: "Done." }]);
  const sid = await createSession({
    name: "orchestrator",
    model: `openai-compatible:${scriptId}`,
    instructions: "You coordinate agents.",
    tools: ["agent_orchestrate"],
  });
  return { sid, scriptId };
}

/** Runs one orchestrating turn to its end and picks out the orchestration's result and state machine. */
async function orchestrate(args: Record<string, unknown>, plannerAnswer?: string) {
  const { sid, scriptId } = await orchestrator(args, plannerAnswer);
  const { turn_id } = await submitTurn(sid, "Coordinate the agents.");
  const log = await waitForTurnEnd(sid, turn_id, 15_000);
  return { sid, scriptId, turn_id, log, ...orchestration(log) };
}

function orchestration(log: any[], callId = CALL) {
  const result = log.find((e) => e.type === "tool.result" && e.tool_call_id === callId);
  const statuses = log.filter((e) => e.type === "run.status" && e.payload?.scope === "agent_orchestrate" && e.parent_id === callId);
  return { result: result?.payload as { output: any; is_error: boolean } | undefined, statuses, phases: statuses.map((e) => e.payload.phase as string) };
}

async function snapshot(sid: string): Promise<any> {
  const res = await api("GET", `/v1/sessions/${sid}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Polls until the child session `execId` exists (a step is dispatched just before its session is created). */
async function waitForSession(execId: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await api("GET", `/v1/sessions/${execId}`)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`session ${execId} was not created`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A child session's (only) turn, once it has ended: its log and terminal event. */
async function childTurn(execId: string, timeoutMs = 10_000): Promise<{ log: any[]; end: any; turn_id: string }> {
  await waitForSession(execId, timeoutMs);
  const submitted = await waitForEvent(execId, (e) => e.type === "turn.submitted", timeoutMs);
  const log = await waitForTurnEnd(execId, submitted.turn_id, timeoutMs);
  return { log, end: log.find((e) => e.turn_id === submitted.turn_id && TERMINAL.includes(e.type)), turn_id: submitted.turn_id };
}

const userText = (request: any) =>
  request.messages
    .filter((m: any) => m.role === "user")
    .map((m: any) => m.content)
    .join("\n");
const systemText = (request: any) =>
  request.messages
    .filter((m: any) => m.role === "system")
    .map((m: any) => m.content)
    .join("\n");
const toolMessage = (request: any, id: string) => request.messages.find((m: any) => m.role === "tool" && m.tool_call_id === id)?.content as string | undefined;

describe("agent_orchestrate: sequential steps", () => {
  it("binds s1's output into s2's prompt; each step is a child session readable on its own; the state machine is in the parent's log", async () => {
    const facts = "Paris is the capital of France and has 2.1 million inhabitants.";
    const A = await stepAgent("facts", [{ text: facts }]);
    const B = await stepAgent("summary", [{ text: "Paris: French capital, 2.1M people." }]);
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: A.name, prompt: "List facts about {{ bindings.topic }}.", result_key: "facts" },
        { id: "s2", type: "agent", agent: B.name, prompt: "Summarize these facts: {{ bindings.facts }}" },
      ],
    };
    const { sid, scriptId, turn_id, log, result, statuses, phases } = await orchestrate({ plan, bindings: { topic: "Paris" } });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", turn_id, payload: { output: "Done.", stop_reason: "final_answer" } });

    // B's model saw A's output, through the template.
    const [aRequest] = await requests(A.scriptId);
    const [bRequest] = await requests(B.scriptId);
    expect(userText(aRequest)).toBe("List facts about Paris.");
    expect(userText(bRequest)).toBe(`Summarize these facts: ${facts}`);
    expect(systemText(bRequest)).toBe("The summary agent.");

    // The result.
    expect(result!.is_error).toBe(false);
    const [r1, r2] = result!.output.steps;
    expect(result!.output).toEqual({
      success: true,
      steps: [
        { id: "s1", type: "agent", status: "success", exec_id: expect.stringMatching(/^ses_/), output: facts, error: null, elapsed_ms: expect.any(Number) },
        {
          id: "s2",
          type: "agent",
          status: "success",
          exec_id: expect.stringMatching(/^ses_/),
          output: "Paris: French capital, 2.1M people.",
          error: null,
          elapsed_ms: expect.any(Number),
        },
      ],
      bindings: { topic: "Paris", facts, s2: "Paris: French capital, 2.1M people." },
    });
    expect(r1.exec_id).not.toBe(r2.exec_id);
    expect(r1.exec_id).not.toBe(sid);

    // Each exec_id is a session of the step's agent, linked to the parent, whose turn had the rendered prompt as input.
    for (const [step, agent, input, output] of [
      [r1, A, "List facts about Paris.", facts],
      [r2, B, `Summarize these facts: ${facts}`, "Paris: French capital, 2.1M people."],
    ] as const) {
      const snap = await snapshot(step.exec_id);
      expect(snap).toMatchObject({
        session_id: step.exec_id,
        agent: { name: agent.name, model: `openai-compatible:${agent.scriptId}` },
        status: "idle",
        turn_count: 1,
      });
      expect(snap.metadata).toEqual({ parent_session_id: sid, parent_turn_id: turn_id });
      expect(snap.orchestration_depth).toBe(1);
      const child = await events(step.exec_id);
      expect(child.find((e) => e.type === "session.created").payload).toMatchObject({ agent: agent.name });
      expect(child.find((e) => e.type === "turn.submitted").payload).toMatchObject({ input });
      expect(child.find((e) => e.type === "turn.started").payload).toMatchObject({ agent: agent.name });
      expect(child.at(-1)).toMatchObject({ type: "turn.completed", payload: { output, stop_reason: "final_answer" } });
      const thread = await api("GET", `/v1/sessions/${step.exec_id}/thread`);
      expect(thread.body).toMatchObject({ status: "idle", last_outcome: expect.anything() });
    }

    // run.status phases under the tool call, in order; dispatches carry the step and its child session.
    expect(phases).toEqual(["plan_init", "plan_validated", "dispatching_step", "dispatching_step", "completed"]);
    for (const e of statuses) expect(e).toMatchObject({ turn_id, parent_id: CALL, tool_call_id: CALL });
    expect(statuses[1].payload.steps).toBe(2);
    const dispatches = statuses.filter((e) => e.payload.phase === "dispatching_step");
    expect(dispatches.map((e) => [e.payload.step_id, e.payload.exec_id, e.subagent_id, e.payload.agent])).toEqual([
      ["s1", r1.exec_id, r1.exec_id, A.name],
      ["s2", r2.exec_id, r2.exec_id, B.name],
    ]);
    const startedAt = log.findIndex((e) => e.type === "tool.started" && e.tool_call_id === CALL);
    const resultAt = log.findIndex((e) => e.type === "tool.result" && e.tool_call_id === CALL);
    expect(log.indexOf(statuses[0])).toBeGreaterThan(startedAt);
    expect(log.indexOf(statuses.at(-1))).toBeLessThan(resultAt);

    // The orchestrating model got the whole result back.
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(2);
    expect(sent[0].tools.map((t: any) => t.function.name)).toContain("agent_orchestrate");
    expect(JSON.parse(toolMessage(sent[1], CALL)!)).toEqual(result!.output);
  });

  it("a failing step (its model errors) fails the plan: the remaining steps are skipped and never start", async () => {
    const A = await stepAgent("broken", [{ error: { status: 400, message: "the facts model refused the request" } }]);
    const B = await stepAgent("after", [{ text: "never" }]);
    const C = await stepAgent("later", [{ text: "never" }]);
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: A.name, prompt: "Facts please", result_key: "facts" },
        { id: "s2", type: "agent", agent: B.name, prompt: "Use {{ bindings.facts }}" },
        { id: "g3", type: "parallel", steps: [{ id: "s3", type: "agent", agent: C.name }] },
      ],
    };
    const { scriptId, log, result, phases } = await orchestrate({ plan });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
    expect(result!.is_error).toBe(true);
    const out = result!.output;
    expect(out.success).toBe(false);
    expect(out.steps[0]).toMatchObject({ id: "s1", type: "agent", status: "failed", exec_id: expect.stringMatching(/^ses_/), output: null });
    expect(out.steps[0].error).toContain("the facts model refused the request");
    expect(out.steps.slice(1)).toEqual([
      { id: "s2", type: "agent", status: "skipped", exec_id: null, output: null, error: null, elapsed_ms: 0 },
      { id: "g3", type: "parallel", status: "skipped", exec_id: null, output: null, error: null, elapsed_ms: 0 },
    ]);
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toMatch(/^s1: .*the facts model refused the request/);
    expect(out.bindings).toEqual({});
    expect(phases).toEqual(["plan_init", "plan_validated", "dispatching_step", "failed"]);
    expect(await requests(B.scriptId)).toEqual([]);
    expect(await requests(C.scriptId)).toEqual([]);

    // The failed step's session shows why.
    const child = await childTurn(out.steps[0].exec_id);
    expect(child.end).toMatchObject({ type: "turn.failed", payload: { error: { code: "model_error" } } });
    // The model was told.
    const sent = await requests(scriptId);
    expect(JSON.parse(toolMessage(sent[1], CALL)!)).toMatchObject({ success: false, errors: out.errors });
  });
});

describe("agent_orchestrate: parallel groups", () => {
  it("collect: both steps run as child sessions; outputs keyed by result_key or step id; the group binds for later steps", async () => {
    const A = await stepAgent("left", [{ text: "Left answer." }]);
    const demo = `echo-${crypto.randomUUID().slice(0, 8)}`;
    await createAgent({ name: demo, model: "demo:x", instructions: "Echo agent." });
    const C = await stepAgent("joiner", [{ text: "Joined." }]);
    const plan = {
      steps: [
        {
          id: "g1",
          type: "parallel",
          merge: "collect",
          result_key: "both",
          steps: [
            { id: "a", type: "agent", agent: A.name, prompt: "Left side", result_key: "left" },
            { id: "b", type: "agent", agent: demo, prompt: "Right side please" },
          ],
        },
        { id: "s2", type: "agent", agent: C.name, prompt: "Join {{ bindings.both.left }} with {{ bindings.both.b }}" },
      ],
    };
    const { log, result, phases, statuses } = await orchestrate({ plan });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed" });
    expect(result!.is_error).toBe(false);
    const [g, s2] = result!.output.steps;
    expect(g).toMatchObject({ id: "g1", type: "parallel", status: "success", exec_id: null, error: null });
    expect(Object.keys(g.output).sort()).toEqual(["b", "left"]);
    expect(g.output.left).toBe("Left answer.");
    expect(g.output.b).toContain("Right side please");
    expect(g.children.map((c: any) => [c.id, c.type, c.status, c.error])).toEqual([
      ["a", "agent", "success", null],
      ["b", "agent", "success", null],
    ]);
    expect(s2).toMatchObject({ id: "s2", status: "success", output: "Joined." });
    expect(userText((await requests(C.scriptId))[0])).toBe(`Join Left answer. with ${g.output.b}`);
    expect(result!.output.bindings).toEqual({ both: g.output, s2: "Joined." });

    // Each child is its own session of its agent.
    const [ca, cb] = g.children;
    expect(ca.exec_id).not.toBe(cb.exec_id);
    expect((await snapshot(ca.exec_id)).agent.name).toBe(A.name);
    expect((await snapshot(cb.exec_id)).agent.name).toBe(demo);
    expect((await childTurn(cb.exec_id)).end).toMatchObject({ type: "turn.completed", payload: { output: g.output.b } });

    expect(phases).toEqual([
      "plan_init",
      "plan_validated",
      "awaiting_results",
      "dispatching_step",
      "dispatching_step",
      "merging_results",
      "dispatching_step",
      "completed",
    ]);
    expect(statuses.find((e) => e.payload.phase === "awaiting_results").payload).toMatchObject({ step_id: "g1", steps: ["a", "b"] });
    expect(new Set(statuses.filter((e) => e.payload.phase === "dispatching_step").map((e) => e.subagent_id))).toEqual(
      new Set([ca.exec_id, cb.exec_id, s2.exec_id]),
    );
  });

  it("collect with a failing step: the group is partial, the plan fails, later steps are skipped, the result still reaches the model", async () => {
    const A = await stepAgent("fine", [{ text: "Fine answer." }]);
    const B = await stepAgent("flaky", [{ error: { status: 400, message: "flaky model failed" } }]);
    const C = await stepAgent("next", [{ text: "never" }]);
    const plan = {
      steps: [
        {
          id: "g1",
          type: "parallel",
          merge: "collect",
          steps: [
            { id: "a", type: "agent", agent: A.name, prompt: "Do a" },
            { id: "b", type: "agent", agent: B.name, prompt: "Do b" },
          ],
        },
        { id: "s3", type: "agent", agent: C.name, prompt: "Then this" },
      ],
    };
    const { scriptId, log, result, phases } = await orchestrate({ plan });
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
    expect(result!.is_error).toBe(true);
    const out = result!.output;
    expect(out.success).toBe(false);
    const g = out.steps[0];
    expect(g).toMatchObject({ id: "g1", status: "partial", output: { a: "Fine answer.", b: null } });
    expect(g.error).toMatch(/^b: .*flaky model failed/);
    expect(g.children.map((c: any) => [c.id, c.status])).toEqual([
      ["a", "success"],
      ["b", "failed"],
    ]);
    expect(out.steps[1]).toEqual({ id: "s3", type: "agent", status: "skipped", exec_id: null, output: null, error: null, elapsed_ms: 0 });
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toMatch(/^g1: b: .*flaky model failed/);
    expect(await requests(C.scriptId)).toEqual([]);
    expect(phases).toEqual(["plan_init", "plan_validated", "awaiting_results", "dispatching_step", "dispatching_step", "merging_results", "failed"]);
    expect((await childTurn(g.children[1].exec_id)).end.type).toBe("turn.failed");
    expect((await childTurn(g.children[0].exec_id)).end.type).toBe("turn.completed");
    const sent = await requests(scriptId);
    expect(JSON.parse(toolMessage(sent[1], CALL)!)).toMatchObject({ success: false, errors: out.errors });
    expect(log.find((e) => e.type === "tool.result" && e.tool_call_id === CALL).payload.metadata.status).toBe("error");
  });

  it("first_success: the first success wins; a step still running is cancelled (its child turn ends turn.cancelled)", async () => {
    const fast = await stepAgent("fast", [{ text: "Fast answer." }]);
    const slow = await stepAgent("slow", [{ hang: true, text: "thinking..." }]);
    const plan = {
      steps: [
        {
          id: "race",
          type: "parallel",
          merge: "first_success",
          result_key: "winner",
          steps: [
            { id: "quick", type: "agent", agent: fast.name, prompt: "Answer fast" },
            { id: "sluggish", type: "agent", agent: slow.name, prompt: "Answer slowly" },
          ],
        },
      ],
    };
    const started = Date.now();
    const { log, result, statuses } = await orchestrate({ plan });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed" });

    // The slow step's child was cancelled, not left running.
    const slowExec = statuses.find((e) => e.payload.phase === "dispatching_step" && e.payload.step_id === "sluggish")?.payload.exec_id;
    expect(slowExec).toEqual(expect.stringMatching(/^ses_/));
    const slowChild = await childTurn(slowExec);
    expect(slowChild.end.type).toBe("turn.cancelled");
    expect((await snapshot(slowExec)).status).toBe("idle");

    // The group (and the plan) succeeded with the winner's output.
    const g = result!.output.steps[0];
    expect(g).toMatchObject({ id: "race", type: "parallel", status: "success", output: "Fast answer.", error: null });
    expect(g.children.find((c: any) => c.id === "quick")).toMatchObject({ status: "success", output: "Fast answer." });
    expect(["skipped", "failed"]).toContain(g.children.find((c: any) => c.id === "sluggish").status);
    expect(result!.output).toMatchObject({ success: true, bindings: { winner: "Fast answer." } });
    expect(result!.is_error).toBe(false);
  });
});

describe("agent_orchestrate: plan validation", () => {
  const cases: [string, (a: string) => unknown[], RegExp][] = [
    [
      "a duplicate step id",
      (a) => [
        { id: "s1", type: "agent", agent: a },
        { id: "s1", type: "agent", agent: a },
      ],
      /^step "s1": the id is used twice$/,
    ],
    [
      "a duplicate result key",
      (a) => [
        { id: "s1", type: "agent", agent: a, result_key: "k" },
        { id: "s2", type: "agent", agent: a, result_key: "k" },
      ],
      /^step "s2": result_key "k" is used twice$/,
    ],
    ["an unknown agent", () => [{ id: "s1", type: "agent", agent: `nobody-${crypto.randomUUID().slice(0, 8)}` }], /^step "s1": unknown agent "nobody-/],
    [
      "an empty parallel group",
      () => [{ id: "g_empty", type: "parallel", merge: "collect", steps: [] }],
      /g_empty.*at least one step|at least one step.*g_empty/,
    ],
    [
      "more than 12 agent steps",
      (a) => Array.from({ length: 13 }, (_, i) => ({ id: `s${i}`, type: "agent", agent: a })),
      /^plan: 13 agent steps \(at most 12\)$/,
    ],
    [
      "a parallel group over the cap of 4",
      (a) => [{ id: "g1", type: "parallel", steps: Array.from({ length: 5 }, (_, i) => ({ id: `p${i}`, type: "agent", agent: a })) }],
      /^step "g1": 5 steps in a parallel group \(at most 4\)$/,
    ],
  ];

  for (const [what, steps, message] of cases) {
    it(`refuses ${what}: an error result naming the step, and no child session`, async () => {
      const A = await stepAgent("valid", [{ text: "never" }]);
      const { scriptId, log, result, phases } = await orchestrate({ plan: { steps: steps(A.name) } });
      expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
      expect(result!.is_error).toBe(true);
      expect(result!.output).toMatchObject({ success: false, steps: [], bindings: {} });
      expect(result!.output.errors).toHaveLength(1);
      expect(result!.output.errors[0]).toMatch(message);
      expect(phases).toEqual(["plan_init", "failed"]);
      expect(log.filter((e) => e.subagent_id)).toEqual([]);
      expect(await requests(A.scriptId)).toEqual([]);
      const sent = await requests(scriptId);
      expect(JSON.parse(toolMessage(sent[1], CALL)!)).toMatchObject({ success: false, errors: result!.output.errors });
    });
  }
});

describe("agent_orchestrate: a plan from the planner", () => {
  it("a prompt becomes a plan through a planner model call without tools, and the plan runs", async () => {
    const A = await stepAgent("researcher", [{ text: "Tides are caused by the moon." }]);
    const B = await stepAgent("writer", [{ text: "The moon pulls the sea." }]);
    const plan = {
      steps: [
        { id: "research", type: "agent", agent: A.name, prompt: "Why are there tides?", result_key: "facts" },
        { id: "write", type: "agent", agent: B.name, prompt: "Explain simply: {{ bindings.facts }}" },
      ],
    };
    const prompt = "Find out why there are tides and explain it simply.";
    const { scriptId, log, result, phases } = await orchestrate({ prompt }, JSON.stringify(plan));
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
    expect(log.filter((e) => e.type === "model.requested").map((e) => e.payload.phase)).toEqual(["executor", "planner", "executor"]);
    expect(phases).toEqual(["plan_init", "planner_active", "plan_validated", "dispatching_step", "dispatching_step", "completed"]);
    expect(result).toMatchObject({
      is_error: false,
      output: { success: true, bindings: { facts: "Tides are caused by the moon.", write: "The moon pulls the sea." } },
    });
    expect(userText((await requests(B.scriptId))[0])).toBe("Explain simply: Tides are caused by the moon.");

    // The planner request: no tools at all (it cannot call agent_orchestrate), the registered agents listed, the prompt as the task.
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(3);
    const planner = sent[1];
    expect(planner.tools ?? []).toEqual([]);
    expect(planner.tool_choice).toBeUndefined();
    expect(systemText(planner)).toContain("JSON");
    expect(systemText(planner)).toContain(`- ${A.name}: The researcher agent.`);
    expect(systemText(planner)).toContain(`- ${B.name}: The writer agent.`);
    expect(userText(planner)).toBe(prompt);
    // The planner's answer does not enter the executor's conversation.
    expect(JSON.stringify(sent[2].messages)).not.toContain('"research"');
  });

  it("a planner answer that is not a JSON plan is refused with a clear error, and nothing runs", async () => {
    const A = await stepAgent("unused", [{ text: "never" }]);
    const prose = await orchestrate({ prompt: `Use ${A.name} to do something.` }, `Sure! I'll ask ${A.name} first and then summarize.`);
    expect(prose.log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
    expect(prose.result).toEqual({
      output: { success: false, steps: [], bindings: {}, errors: ["the planner did not return a JSON plan"] },
      is_error: true,
      name: "agent_orchestrate",
      metadata: expect.any(Object),
    });
    expect(prose.phases).toEqual(["plan_init", "planner_active", "failed"]);

    const wrongShape = await orchestrate({ prompt: `Use ${A.name}.` }, JSON.stringify({ steps: [{ id: "s1", agent: A.name, run: "now" }] }));
    expect(wrongShape.result!.is_error).toBe(true);
    expect(wrongShape.result!.output.success).toBe(false);
    expect(wrongShape.result!.output.errors.join("\n")).toMatch(/^step "s1" /m); // schema errors name the step by its id
    expect(wrongShape.phases).toEqual(["plan_init", "planner_active", "failed"]);

    const unknownAgent = await orchestrate({ prompt: "Use someone." }, JSON.stringify({ steps: [{ id: "s1", type: "agent", agent: "agent_orchestrate" }] }));
    expect(unknownAgent.result!.output.errors).toEqual(['step "s1": unknown agent "agent_orchestrate"']);

    for (const run of [prose, wrongShape, unknownAgent]) expect(run.log.filter((e) => e.subagent_id)).toEqual([]);
    expect(await requests(A.scriptId)).toEqual([]);
  });
});

describe("agent_orchestrate: limits and cancellation", () => {
  it("orchestration nests with depth recorded on each child session, and is refused at depth 3", async () => {
    const leaf = await stepAgent("leaf", [{ text: "never" }]);
    const l3 = await stepAgent(
      "level3",
      [
        { tool_calls: [orchestrateCall({ plan: { steps: [{ id: "s1", type: "agent", agent: leaf.name }] } }, "orc_l3")] },
        { text: "Level 3 could not go deeper." },
      ],
      { tools: ["agent_orchestrate"] },
    );
    const l2 = await stepAgent(
      "level2",
      [
        { tool_calls: [orchestrateCall({ plan: { steps: [{ id: "s1", type: "agent", agent: l3.name, prompt: "Go to level 3" }] } }, "orc_l2")] },
        { text: "Level 2 done." },
      ],
      { tools: ["agent_orchestrate"] },
    );
    const l1 = await stepAgent(
      "level1",
      [
        { tool_calls: [orchestrateCall({ plan: { steps: [{ id: "s1", type: "agent", agent: l2.name, prompt: "Go to level 2" }] } }, "orc_l1")] },
        { text: "Level 1 done." },
      ],
      { tools: ["agent_orchestrate"] },
    );

    const root = await orchestrate({ plan: { steps: [{ id: "s1", type: "agent", agent: l1.name, prompt: "Go to level 1" }] } });
    expect(root.result).toMatchObject({ is_error: false, output: { success: true, bindings: { s1: "Level 1 done." } } });

    // Walk down the chain: each step's session records its depth and its parent.
    let parent = root.sid;
    let exec: string = root.result!.output.steps[0].exec_id;
    const chain: [string, string, number][] = [
      [l1.name, "orc_l1", 1],
      [l2.name, "orc_l2", 2],
      [l3.name, "orc_l3", 3],
    ];
    let deepest: ReturnType<typeof orchestration> | null = null;
    for (const [agentName, callId, depth] of chain) {
      const snap = await snapshot(exec);
      expect(snap.agent.name).toBe(agentName);
      expect(snap.metadata).toMatchObject({ parent_session_id: parent });
      expect(snap.metadata).not.toHaveProperty("orchestration_depth");
      expect(snap.orchestration_depth).toBe(depth);
      const { log } = await childTurn(exec);
      expect(log.at(-1).type).toBe("turn.completed");
      const inner = orchestration(log, callId);
      if (depth < 3) {
        expect(inner.result).toMatchObject({ is_error: false, output: { success: true } });
        parent = exec;
        exec = inner.result!.output.steps[0].exec_id;
      } else {
        deepest = inner;
      }
    }
    // At depth 3 the call is an error result and nothing runs.
    expect(deepest!.result).toMatchObject({
      is_error: true,
      output: { success: false, steps: [], errors: ["orchestration depth limit reached (3)"] },
    });
    expect(deepest!.phases).toEqual(["failed"]);
    expect(await requests(leaf.scriptId)).toEqual([]);
    expect(JSON.parse(toolMessage((await requests(l3.scriptId))[1], "orc_l3")!)).toMatchObject({ success: false });
  });

  it("a step over its timeout_ms fails with a timeout, and its child turn is cancelled", async () => {
    const slow = await stepAgent("stuck", [{ hang: true, text: "..." }]);
    const next = await stepAgent("next", [{ text: "never" }]);
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: slow.name, prompt: "Take forever", timeout_ms: 1_000 },
        { id: "s2", type: "agent", agent: next.name },
      ],
    };
    const started = Date.now();
    const { result } = await orchestrate({ plan });
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(result!.output.steps[0]).toMatchObject({ id: "s1", status: "failed", error: "timed out after 1000 ms" });
    expect(result!.output.steps[1]).toMatchObject({ id: "s2", status: "skipped" });
    const child = await childTurn(result!.output.steps[0].exec_id);
    expect(child.end).toMatchObject({ type: "turn.cancelled", payload: { reason: "the step timed out after 1000 ms" } });
    expect(await requests(next.scriptId)).toEqual([]);
  });

  it("interrupting the parent turn while a step's child runs interrupts the child; both end turn.cancelled", async () => {
    const slow = await stepAgent("long", [{ hang: true, text: "working..." }]);
    const next = await stepAgent("next", [{ text: "never" }]);
    const { sid } = await orchestrator({
      plan: {
        steps: [
          { id: "s1", type: "agent", agent: slow.name, prompt: "Work for a long time" },
          { id: "s2", type: "agent", agent: next.name },
        ],
      },
    });
    const { turn_id } = await submitTurn(sid, "Coordinate the agents.");
    const dispatched = await waitForEvent(sid, (e) => e.type === "run.status" && e.payload?.phase === "dispatching_step");
    const execId: string = dispatched.payload.exec_id;
    await waitForSession(execId);
    await waitForEvent(execId, (e) => e.type === "model.delta");

    const res = await api("POST", `/v1/sessions/${sid}/interrupt`, { reason: "user stopped it" });
    expect(res.body).toEqual({ interrupted: true, turn_id });
    const log = await waitForTurnEnd(sid, turn_id, 3_000);
    expect(log.at(-1)).toMatchObject({ type: "turn.cancelled", turn_id, payload: { reason: "user stopped it" } });
    // The orchestrate call is closed before the end; no step after s1 was dispatched.
    const callResult = log.find((e) => e.type === "tool.result" && e.tool_call_id === CALL);
    expect(callResult?.payload.is_error).toBe(true);
    expect(log.filter((e) => e.type === "run.status" && e.payload?.phase === "dispatching_step")).toHaveLength(1);

    // The child turn was interrupted too.
    const child = await childTurn(execId, 5_000);
    expect(child.end.type).toBe("turn.cancelled");
    expect(child.end.payload.reason).toMatch(/interrupted/);
    expect((await snapshot(execId)).status).toBe("idle");

    // Nothing more arrives for the parent's cancelled turn, and the session takes the next turn.
    await new Promise((r) => setTimeout(r, 200));
    expect((await events(sid)).filter((e) => e.turn_id === turn_id)).toHaveLength(log.filter((e) => e.turn_id === turn_id).length);
    expect(await requests(next.scriptId)).toEqual([]);
    expect((await snapshot(sid)).status).toBe("idle");
  });
});
