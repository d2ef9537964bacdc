// Sub-agents and the turn budget end to end through the public surface: run_subtask with an
// isolated child conversation, parallel run_subtask calls, spawn_subagents, the execution tree route, budget
// limits, and interrupts, approvals and restarts while a child runs.
import { abortAllDurableObjects, env, evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createSession, events, expectGapless, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { requests, type Step, script, toolRequests, toolURL, uniqueId } from "../../support/fake-model";

const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));

/** An agent on the fake model server, scripted with `steps` (the parent's and its children's requests, in request order). */
async function scripted(steps: Step[], config: Record<string, unknown>): Promise<{ sid: string; scriptId: string }> {
  const scriptId = uniqueId("subagents");
  await script(scriptId, steps);
  const sid = await createSession({ name: "parent", model: `openai-compatible:${scriptId}`, ...config });
  return { sid, scriptId };
}

const runSubtask = (args: Record<string, unknown>) => ({ name: "run_subtask", arguments: args });

/** The one event of `type` matching `match` (fails when there is not exactly one). */
function one(log: any[], type: string, match: (e: any) => boolean = () => true): any {
  const found = log.filter((e) => e.type === type && match(e));
  expect(found, `exactly one ${type}`).toHaveLength(1);
  return found[0];
}

/** Tool messages of a Chat Completions request, as [tool_call_id, content]. */
const toolMessages = (request: any) => request.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content]);
const offeredTools = (request: any) => (request.tools ?? []).map((t: any) => t.function.name);
/** The user message of a child's request (its task). */
const taskOf = (request: any) => request.messages.find((m: any) => m.role === "user")?.content as string;

async function thread(sid: string): Promise<any> {
  const res = await api("GET", `/v1/sessions/${sid}/thread`);
  expect(res.status).toBe(200);
  return res.body;
}

async function tree(sid: string, turnId: string): Promise<any> {
  const res = await api("GET", `/v1/sessions/${sid}/turns/${turnId}/tree`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Every event of a child carries the child's envelope. */
function expectChildEnvelope(e: any, parentId: string, subagentId: string): void {
  expect({ type: e.type, parent_id: e.parent_id, depth: e.depth, subagent_id: e.subagent_id }).toEqual({
    type: e.type,
    parent_id: parentId,
    depth: 1,
    subagent_id: subagentId,
  });
}

const PARENT_INPUT = "What is 6 times 7? Delegate it.";
const PARENT_INSTRUCTIONS = "You are the parent agent. Delegate arithmetic.";
const CHILD_INSTRUCTIONS = "Compute 6 * 7 with the calculator and report the product.";

/** Parent → run_subtask (tools: calculator) → child calls calculator, answers `childAnswer` → parent answers. */
async function delegatedTurn(childAnswer: string) {
  const { sid, scriptId } = await scripted(
    [
      { text: "Delegating.", tool_calls: [runSubtask({ title: "Multiply", instructions: CHILD_INSTRUCTIONS, tools: ["calculator"] })] },
      { tool_calls: [{ name: "calculator", arguments: { expression: "6 * 7" } }] },
      { text: childAnswer },
      { text: "The sub-agent found 42." },
    ],
    { tools: ["run_subtask", "calculator"], instructions: PARENT_INSTRUCTIONS },
  );
  const { turn_id } = await submitTurn(sid, PARENT_INPUT);
  const log = await waitForTurnEnd(sid, turn_id);
  return { sid, scriptId, turn_id, log };
}

describe("run_subtask", () => {
  it("runs a child with an isolated conversation and narrowed tools; its events carry the child's envelope; its answer is the result", async () => {
    const childAnswer = "The product is 42.";
    const { scriptId, turn_id, log } = await delegatedTurn(childAnswer);
    expectGapless(log);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", turn_id, payload: { output: "The sub-agent found 42.", stop_reason: "final_answer" } });

    // The parent's run_subtask call, at the root.
    const runStarted = one(log, "tool.started", (e) => e.payload.name === "run_subtask");
    const runCallId: string = runStarted.tool_call_id;
    expect(runStarted.parent_id ?? null).toBeNull();
    expect(runStarted.depth ?? 0).toBe(0);
    expect(runStarted.payload.args).toEqual({ title: "Multiply", instructions: CHILD_INSTRUCTIONS, tools: ["calculator"] });

    const spawned = one(log, "subagent.spawned");
    expect(spawned).toMatchObject({ turn_id, parent_id: runCallId, depth: 1, subagent_id: expect.any(String) });
    expect(spawned.payload).toMatchObject({ title: "Multiply", depth: 1 });
    const subagentId: string = spawned.subagent_id;

    const completed = one(log, "subagent.completed");
    expectChildEnvelope(completed, runCallId, subagentId);
    expect(completed.payload).toEqual({ result: childAnswer });
    expect(log.filter((e) => e.type === "subagent.failed")).toEqual([]);

    // Everything between spawned and completed is the child's work (it is the only thing running), with its envelope.
    const from = log.indexOf(spawned);
    const to = log.indexOf(completed);
    const inside = log.slice(from + 1, to);
    for (const e of inside) expectChildEnvelope(e, runCallId, subagentId);
    expect(new Set(inside.map((e) => e.type))).toEqual(
      new Set(["model.requested", "model.delta", "model.completed", "cost.recorded", "tool.started", "tool.result"]),
    );
    // ... and nothing of the child's is outside that window.
    expect(log.filter((e) => e.subagent_id === subagentId && e !== spawned && e !== completed && !inside.includes(e))).toEqual([]);
    expect(inside.filter((e) => e.type === "model.requested")).toHaveLength(2);
    expect(inside.filter((e) => e.type === "cost.recorded")).toHaveLength(2);
    const calc = one(inside, "tool.result", (e) => e.payload.name === "calculator");
    expect(calc.payload).toMatchObject({ output: "42", is_error: false });
    expect(
      inside
        .filter((e) => e.type === "model.delta")
        .map((e) => e.payload.text)
        .join(""),
    ).toBe(childAnswer);

    // The parent's events stay at the root.
    for (const e of log.filter((x) => x.turn_id === turn_id && !x.subagent_id && x.type !== "subagent.spawned")) {
      expect([e.type, e.parent_id ?? null, e.depth ?? 0]).toEqual([e.type, null, 0]);
    }

    // The run_subtask result is the child's answer.
    const runResult = one(log, "tool.result", (e) => e.tool_call_id === runCallId);
    expect(runResult.payload).toMatchObject({ name: "run_subtask", output: childAnswer, is_error: false, metadata: { status: "success" } });
    expect(log.indexOf(completed)).toBeLessThan(log.indexOf(runResult));

    // What the model saw: the child only its system message and the task, and only calculator.
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(4);
    const [parentFirst, childFirst, childSecond, parentSecond] = sent;
    expect(offeredTools(parentFirst).sort()).toEqual(["calculator", "run_subtask"]);
    expect(childFirst.messages.map((m: any) => m.role)).toEqual(["system", "user"]);
    expect(taskOf(childFirst)).toContain(CHILD_INSTRUCTIONS);
    expect(taskOf(childFirst)).toContain("Multiply");
    const childPrompt = JSON.stringify(childFirst.messages);
    expect(childPrompt).not.toContain(PARENT_INPUT);
    expect(childPrompt).not.toContain(PARENT_INSTRUCTIONS);
    expect(childPrompt).not.toContain("Delegating.");
    expect(offeredTools(childFirst)).toEqual(["calculator"]);
    expect(toolMessages(childSecond)).toEqual([[calc.tool_call_id, "42"]]);
    // The parent continues its own conversation, with the child's answer as the run_subtask result.
    expect(parentSecond.messages[0]).toEqual({ role: "system", content: PARENT_INSTRUCTIONS });
    expect(parentSecond.messages.some((m: any) => m.role === "user" && m.content === PARENT_INPUT)).toBe(true);
    expect(toolMessages(parentSecond)).toEqual([[runCallId, childAnswer]]);
    expect(JSON.stringify(parentSecond.messages)).not.toContain(calc.tool_call_id); // the child's transcript stays out
    expect(parentSecond.messages.filter((m: any) => m.role === "tool")).toHaveLength(1);
  });

  it("the execution tree nests the child's calls under run_subtask, survives a restart, and is 404 for an unknown turn", async () => {
    const longAnswer = `The product is 42. ${"Details. ".repeat(120)}`;
    expect(longAnswer.length).toBeGreaterThan(1000);
    const { sid, turn_id, log } = await delegatedTurn(longAnswer);
    expect(log.at(-1).type).toBe("turn.completed");
    const runCallId = one(log, "tool.started", (e) => e.payload.name === "run_subtask").tool_call_id;
    const calcCallId = one(log, "tool.started", (e) => e.payload.name === "calculator").tool_call_id;

    const body = await tree(sid, turn_id);
    expect(body.version).toBe(1);
    expect(body.nodes).toHaveLength(1);
    const [run] = body.nodes;
    expect(run).toMatchObject({
      id: runCallId,
      parent_id: null,
      name: "run_subtask",
      title: "Multiply",
      is_error: false,
      duration_ms: expect.any(Number),
    });
    expect(typeof run.args_preview).toBe("string");
    expect(run.args_preview).toContain(CHILD_INSTRUCTIONS);
    expect(run.args_preview.length).toBeLessThanOrEqual(500);
    expect(typeof run.result_preview).toBe("string");
    expect(run.result_preview.length).toBeLessThanOrEqual(500);
    expect(run.result_preview.startsWith("The product is 42.")).toBe(true);
    expect(run.duration_ms).toBeGreaterThanOrEqual(0);

    expect(run.children).toHaveLength(1);
    const [calc] = run.children;
    expect(calc).toMatchObject({
      id: calcCallId,
      parent_id: runCallId,
      name: "calculator",
      result_preview: "42",
      is_error: false,
      duration_ms: expect.any(Number),
    });
    expect(calc.args_preview).toContain("6 * 7");
    expect(calc.children ?? []).toEqual([]);

    // Folded from the durable log: a restarted object answers the same tree.
    await evictDurableObject(stub(sid));
    expect(await tree(sid, turn_id)).toEqual(body);

    const unknown = await api("GET", `/v1/sessions/${sid}/turns/trn_doesnotexist/tree`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
  });

  it("runs several run_subtask calls of one step concurrently and feeds the results back in the order the calls were emitted", async () => {
    // Both children get one of these two answers, whichever asks first; the first is slow so it finishes last.
    const SLOW = "slow answer";
    const FAST = "fast answer";
    const { sid, scriptId } = await scripted(
      [
        {
          tool_calls: [runSubtask({ title: "Alpha", instructions: "Do the alpha part." }), runSubtask({ title: "Beta", instructions: "Do the beta part." })],
        },
        { text: SLOW, chunk_size: 1, delay_ms: 15 },
        { text: FAST },
        { text: "Both parts are done." },
      ],
      { tools: ["run_subtask", "calculator"] },
    );
    const { turn_id } = await submitTurn(sid, "Do alpha and beta.");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "Both parts are done." } });

    const runCalls = log.filter((e) => e.type === "tool.started" && e.payload.name === "run_subtask");
    expect(runCalls.map((e) => e.payload.args.title)).toEqual(["Alpha", "Beta"]);
    const [alphaId, betaId] = runCalls.map((e) => e.tool_call_id as string);

    const spawned = log.filter((e) => e.type === "subagent.spawned");
    expect(spawned.map((e) => [e.parent_id, e.payload.title, e.depth])).toEqual([
      [alphaId, "Alpha", 1],
      [betaId, "Beta", 1],
    ]);
    expect(new Set(spawned.map((e) => e.subagent_id)).size).toBe(2);
    const completed = log.filter((e) => e.type === "subagent.completed");
    expect(completed).toHaveLength(2);

    // Which child got which answer follows the order of their requests; each saw only its own task.
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(4);
    const childRequests = sent.slice(1, 3);
    for (const r of childRequests) expect(r.messages.map((m: any) => m.role)).toEqual(["system", "user"]);
    const alphaFirst = taskOf(childRequests[0]).includes("alpha");
    expect(taskOf(childRequests[alphaFirst ? 0 : 1])).toContain("Do the alpha part.");
    expect(taskOf(childRequests[alphaFirst ? 1 : 0])).toContain("Do the beta part.");
    expect(JSON.stringify(childRequests[alphaFirst ? 0 : 1].messages)).not.toContain("beta");
    const expected = { [alphaId!]: alphaFirst ? SLOW : FAST, [betaId!]: alphaFirst ? FAST : SLOW };

    for (const c of completed) {
      const sp = spawned.find((s) => s.subagent_id === c.subagent_id);
      expect(c.parent_id).toBe(sp.parent_id);
      expect(c.payload.result).toBe(expected[c.parent_id]);
    }
    for (const id of [alphaId!, betaId!]) {
      expect(one(log, "tool.result", (e) => e.tool_call_id === id).payload).toMatchObject({ output: expected[id], is_error: false });
    }

    // They ran at the same time: the second child asked the model before the first one's (slow) call completed.
    const requested = log.filter((e) => e.type === "model.requested" && e.depth === 1);
    expect(requested).toHaveLength(2);
    const firstCompleted = log.find((e) => e.type === "model.completed" && e.depth === 1);
    expect(log.indexOf(requested[1])).toBeLessThan(log.indexOf(firstCompleted));

    // Fed back in emitted order, whatever order they finished in.
    expect(toolMessages(sent[3])).toEqual([
      [alphaId, expected[alphaId!]],
      [betaId, expected[betaId!]],
    ]);
  });
});

describe("spawn_subagents", () => {
  it("runs jobs in parallel with a structured per-job result; more jobs than allowed or foreign tool_names are error results", async () => {
    const { sid, scriptId } = await scripted(
      [
        {
          tool_calls: [
            {
              name: "spawn_subagents",
              arguments: {
                jobs: [
                  { task: "Say hello", system_prompt: "Answer in French." },
                  { task: "Add numbers", tool_names: ["calculator"], additional_context: "Use 2 and 3." },
                ],
              },
            },
          ],
        },
        { text: "job done" },
        { text: "job done" },
        { tool_calls: [{ name: "spawn_subagents", arguments: { jobs: [{ task: "one" }, { task: "two" }, { task: "three" }] } }] },
        { tool_calls: [{ name: "spawn_subagents", arguments: { jobs: [{ task: "fetch", tool_names: ["http_fetch"] }] } }] },
        { text: "All finished." },
      ],
      { tools: ["calculator", "clock"], instructions: "Parent instructions.", allow_parallel_subagents: true, max_parallel_subagents: 2 },
    );
    const { turn_id } = await submitTurn(sid, "Fan out.");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "All finished." } });

    const results = log.filter((e) => e.type === "tool.result" && e.payload.name === "spawn_subagents");
    expect(results).toHaveLength(3);
    const [ok, tooMany, foreign] = results;

    // Two jobs: two children, each with the call as parent, and a structured array in job order.
    const spawned = log.filter((e) => e.type === "subagent.spawned");
    expect(spawned.map((e) => [e.parent_id, e.depth, e.payload.index])).toEqual([
      [ok.tool_call_id, 1, 0],
      [ok.tool_call_id, 1, 1],
    ]);
    expect(log.filter((e) => e.type === "subagent.completed")).toHaveLength(2);
    expect(ok.payload.is_error).toBe(false);
    expect(ok.payload.output).toEqual([
      { index: 0, status: "success", output: "job done" },
      { index: 1, status: "success", output: "job done" },
    ]);

    // Over max_parallel_subagents: refused whole, nothing spawned.
    expect(tooMany.payload.is_error).toBe(true);
    expect(JSON.stringify(tooMany.payload.output)).toMatch(/too many jobs|at most 2/i);
    // tool_names the parent lacks: refused, naming the tool.
    expect(foreign.payload.is_error).toBe(true);
    expect(JSON.stringify(foreign.payload.output)).toContain("http_fetch");
    expect(log.filter((e) => ["subagent.spawned", "subagent.failed"].includes(e.type) && e.parent_id !== ok.tool_call_id)).toEqual([]);

    const sent = await requests(scriptId);
    expect(sent).toHaveLength(6);
    const children = sent.slice(1, 3);
    const hello = children.find((r) => taskOf(r).includes("Say hello"));
    const add = children.find((r) => taskOf(r).includes("Add numbers"));
    expect(hello && add).toBeTruthy();
    // A job's system_prompt reaches only its child; tool_names narrow its tools; additional_context joins the task.
    expect(hello.messages[0].role).toBe("system");
    expect(hello.messages[0].content).toContain("Answer in French.");
    expect(hello.messages[0].content).not.toContain("Parent instructions.");
    expect(offeredTools(add)).toEqual(["calculator"]);
    expect(taskOf(add)).toContain("Use 2 and 3.");
    expect(add.messages[0].content).not.toContain("Answer in French.");
    // The parent agent is unchanged by the overrides.
    for (const r of [sent[3], sent[5]]) expect(r.messages[0]).toEqual({ role: "system", content: "Parent instructions." });
    // Each result was fed back as its call's tool message: the structured array as JSON, the refusals as errors.
    const fedBack = toolMessages(sent[5]);
    expect(fedBack.map(([id]: [string]) => id)).toEqual([ok.tool_call_id, tooMany.tool_call_id, foreign.tool_call_id]);
    expect(JSON.parse(fedBack[0][1])).toEqual(ok.payload.output);
    expect(toolMessages(sent[3]).map(([id]: [string]) => id)).toEqual([ok.tool_call_id]);
  });
});

describe("the turn budget", () => {
  it("max_total_llm_calls: budget.exceeded at the third call, turn.failed budget_exceeded, used and limits in the thread", async () => {
    const calc = { tool_calls: [{ name: "calculator", arguments: { expression: "1 + 1" } }] };
    const { sid, scriptId } = await scripted([calc, calc, calc, calc], { tools: ["calculator"], budget: { max_total_llm_calls: 2 } });
    const { turn_id } = await submitTurn(sid, "Loop forever.");
    const log = await waitForTurnEnd(sid, turn_id); // events() runs the log verifier: nothing left open
    expectGapless(log);
    const exceeded = one(log, "budget.exceeded");
    expect(exceeded).toMatchObject({ turn_id, payload: { reason: "llm_calls", limit: 2, observed: 3 } });
    const end = log.at(-1);
    expect(end).toMatchObject({ type: "turn.failed", turn_id, payload: { error: { code: "budget_exceeded", message: expect.any(String) } } });
    expect(log.indexOf(exceeded)).toBeLessThan(log.indexOf(end));
    expect(log.filter((e) => e.type === "model.requested")).toHaveLength(2);
    expect(await requests(scriptId)).toHaveLength(2);

    const view = await thread(sid);
    expect(view).toMatchObject({ status: "idle", active_turn_id: null });
    expect(view.budget.used).toMatchObject({ llm_calls: 2, tool_calls: 2, subtasks: 0 });
    expect(view.budget.limits).toMatchObject({ max_total_llm_calls: 2, max_total_tool_calls: 200, max_total_subtasks: 32, max_depth: 3 });
  });

  it("max_total_subtasks: a second run_subtask in the step exceeds it and stops the running child", async () => {
    const hang: Step = { hang: true, text: "working" };
    const { sid, scriptId } = await scripted(
      [{ tool_calls: [runSubtask({ title: "One", instructions: "first" }), runSubtask({ title: "Two", instructions: "second" })] }, hang, hang],
      { tools: ["run_subtask", "calculator"], budget: { max_total_subtasks: 1 } },
    );
    const { turn_id } = await submitTurn(sid, "Two subtasks.");
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(one(log, "budget.exceeded").payload).toEqual({ reason: "subtasks", limit: 1, observed: 2 });
    expect(log.at(-1)).toMatchObject({ type: "turn.failed", turn_id, payload: { error: { code: "budget_exceeded" } } });
    expect(log.filter((e) => e.type === "subagent.spawned")).toHaveLength(1);
    // Both calls are closed (the log verifier checks it too); the spawned child did not complete.
    const runs = log.filter((e) => e.type === "tool.result" && e.payload.name === "run_subtask");
    expect(runs).toHaveLength(2);
    for (const r of runs) expect(r.payload.is_error).toBe(true);
    expect(log.filter((e) => e.type === "subagent.completed")).toEqual([]);
    expect(log.filter((e) => e.type === "subagent.failed")).toHaveLength(1);
    expect((await requests(scriptId)).length).toBeLessThanOrEqual(2);
    expect((await thread(sid)).budget).toMatchObject({ used: { subtasks: 1 }, limits: { max_total_subtasks: 1 } });
  });
});

describe("a child under interrupt, approval and restart", () => {
  it("an interrupt during a child's model call cancels the turn at once, fails the child, closes everything; the next turn runs", async () => {
    const { sid, scriptId } = await scripted(
      [{ tool_calls: [runSubtask({ title: "Stuck", instructions: "think forever" })] }, { hang: true, text: "thinking..." }, { text: "Fresh start." }],
      { tools: ["run_subtask", "calculator"] },
    );
    const { turn_id } = await submitTurn(sid, "Start something long.");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.depth === 1);
    const started = Date.now();
    const res = await api("POST", `/v1/sessions/${sid}/interrupt`, { reason: "stop it" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ interrupted: true, turn_id });
    const log = await waitForTurnEnd(sid, turn_id, 2_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    expectGapless(log);

    const end = log.at(-1);
    expect(end).toMatchObject({ type: "turn.cancelled", turn_id, payload: { reason: "stop it" } });
    const runCallId = one(log, "tool.started", (e) => e.payload.name === "run_subtask").tool_call_id;
    const spawned = one(log, "subagent.spawned");
    const failed = one(log, "subagent.failed");
    expectChildEnvelope(failed, runCallId, spawned.subagent_id);
    expect(failed.payload.error).toEqual(expect.any(String));
    // The child's model call and the run_subtask call are closed before the terminal event.
    const childCall = one(log, "model.requested", (e) => e.depth === 1);
    const childDone = one(log, "model.completed", (e) => e.step_id === childCall.step_id);
    expectChildEnvelope(childDone, runCallId, spawned.subagent_id);
    const runResult = one(log, "tool.result", (e) => e.tool_call_id === runCallId);
    expect(runResult.payload.is_error).toBe(true);
    for (const e of [failed, childDone, runResult]) expect(log.indexOf(e)).toBeLessThan(log.indexOf(end));

    // Nothing more of the cancelled turn arrives later (events() fails on an event after the terminal one).
    await new Promise((r) => setTimeout(r, 200));
    expect((await events(sid)).filter((e) => e.turn_id === turn_id)).toHaveLength(log.filter((e) => e.turn_id === turn_id).length);
    expect((await thread(sid)).status).toBe("idle");

    const next = await submitTurn(sid, "Start over.");
    const after = await waitForTurnEnd(sid, next.turn_id);
    expectGapless(after);
    expect(after.at(-1)).toMatchObject({ type: "turn.completed", turn_id: next.turn_id, payload: { output: "Fresh start." } });
    const sent = await requests(scriptId);
    expect(sent).toHaveLength(3);
    // The cancelled call is answered in the history, so the next request is a valid conversation.
    expect(toolMessages(sent[2]).map(([id]: [string]) => id)).toEqual([runCallId]);
  });

  const DEPLOY = {
    name: "deploy",
    description: "Deploys",
    url: toolURL("echo"),
    parameters: { type: "object", properties: { env: { type: "string" } }, required: ["env"] },
  };

  for (const evict of [false, true]) {
    it(`an approval inside a child carries its envelope; approving resumes the child and the turn completes${evict ? " (object evicted while waiting)" : ""}`, async () => {
      const { sid, scriptId } = await scripted(
        [
          { tool_calls: [runSubtask({ title: "Deploy", instructions: "Deploy to prod.", tools: ["deploy"] })] },
          { tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] },
          { text: "Deployed to prod." },
          { text: "The deployment is done." },
        ],
        { tools: ["run_subtask"], http_tools: [DEPLOY], hitl_tools: ["deploy"] },
      );
      const { turn_id } = await submitTurn(sid, "Ship it.");
      const required = await waitForEvent(sid, (e) => e.type === "action.required");
      let log = await events(sid);
      const runCallId = one(log, "tool.started", (e) => e.payload.name === "run_subtask").tool_call_id;
      const spawned = one(log, "subagent.spawned");
      expectChildEnvelope(required, runCallId, spawned.subagent_id);
      expect(required.payload).toMatchObject({ kind: "tool_approval", tool_name: "deploy", args: { env: "prod" } });
      const view = await thread(sid);
      expect(view).toMatchObject({
        status: "waiting_permission",
        active_turn_id: turn_id,
        pending_actions: [{ action_id: required.action_id, tool_name: "deploy", tool_call_id: required.tool_call_id }],
      });
      expect(log.filter((e) => e.type === "tool.started" && e.payload.name === "deploy")).toEqual([]);

      if (evict) {
        await evictDurableObject(stub(sid));
        expect(await thread(sid)).toEqual(view);
        expect(await events(sid)).toEqual(log);
      }

      const res = await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { decision: "approve" });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ action_id: required.action_id, turn_id, tool_call_id: required.tool_call_id, decision: "approved" });

      log = await waitForTurnEnd(sid, turn_id);
      expectGapless(log);
      expect(log.at(-1)).toMatchObject({ type: "turn.completed", turn_id, payload: { output: "The deployment is done." } });
      expect(log.filter((e) => e.type === "subagent.spawned")).toHaveLength(1);
      expect(one(log, "subagent.completed").payload).toEqual({ result: "Deployed to prod." });

      // The decision and the call it let run belong to the child.
      const resolved = one(log, "action.resolved");
      expect(resolved.payload.decision).toBe("approved");
      const deployResult = one(log, "tool.result", (e) => e.payload.name === "deploy");
      expectChildEnvelope(
        one(log, "tool.started", (e) => e.payload.name === "deploy"),
        runCallId,
        spawned.subagent_id,
      );
      expectChildEnvelope(deployResult, runCallId, spawned.subagent_id);
      expect(deployResult.payload).toMatchObject({
        is_error: false,
        metadata: { status: "success", approval_status: "approved", approval_id: required.action_id },
      });
      expect(deployResult.payload.output.received).toMatchObject({ tool: "deploy", args: { env: "prod" }, session_id: sid, turn_id });
      expect((await toolRequests()).filter((r: any) => r?.session_id === sid)).toHaveLength(1);
      expect(one(log, "tool.result", (e) => e.tool_call_id === runCallId).payload).toMatchObject({ output: "Deployed to prod.", is_error: false });
      // No model call was repeated by the pause (and the restart).
      expect(await requests(scriptId)).toHaveLength(4);
      expect((await thread(sid)).status).toBe("idle");
      // Every event about the child's call carries the child's envelope, the decision included.
      expectChildEnvelope(resolved, runCallId, spawned.subagent_id);
    });
  }

  it("a restart while a child's model call streams: the turn resumes, the child continues without a second spawn, the log is gapless", async () => {
    const { sid, scriptId } = await scripted(
      [
        { tool_calls: [runSubtask({ title: "Slow", instructions: "Write slowly.", tools: [] })] },
        { text: "a slow child answer that takes a while to stream", chunk_size: 1, delay_ms: 20 },
        { text: "child answer after the restart" },
        { text: "Parent done." },
      ],
      { tools: ["run_subtask", "calculator"] },
    );
    const { turn_id } = await submitTurn(sid, "Delegate something slow.");
    await waitForEvent(sid, (e) => e.type === "model.delta" && e.depth === 1);
    await abortAllDurableObjects();
    // The next request starts the object again; it finds the running turn and resumes it.
    const log = await waitForTurnEnd(sid, turn_id);
    expectGapless(log);
    expect(log.at(-1)).toMatchObject({ type: "turn.completed", turn_id, payload: { output: "Parent done." } });
    expect(one(log, "run.status").payload.phase).toBe("recovering");

    const runCallId = one(log, "tool.started", (e) => e.payload.name === "run_subtask").tool_call_id;
    const spawned = one(log, "subagent.spawned"); // exactly one: the child continued, it was not spawned again
    const completed = one(log, "subagent.completed");
    expectChildEnvelope(completed, runCallId, spawned.subagent_id);
    expect(completed.payload).toEqual({ result: "child answer after the restart" });
    expect(one(log, "tool.result", (e) => e.tool_call_id === runCallId).payload).toMatchObject({ output: "child answer after the restart", is_error: false });

    // The child's call cut by the restart is closed (as interrupted) before the resumed child asks again.
    const childCalls = log.filter((e) => e.type === "model.requested" && e.depth === 1);
    expect(childCalls).toHaveLength(2);
    for (const call of childCalls) expectChildEnvelope(call, runCallId, spawned.subagent_id);
    const cut = one(log, "model.completed", (e) => e.step_id === childCalls[0].step_id);
    expect(cut.payload.finish_reason).toBe("interrupted");
    expectChildEnvelope(cut, runCallId, spawned.subagent_id);
    expect(log.indexOf(cut)).toBeLessThan(log.indexOf(childCalls[1]));

    const sent = await requests(scriptId);
    expect(sent).toHaveLength(4);
    // The resumed child asked with its own isolated conversation again.
    expect(sent[2].messages.map((m: any) => m.role)).toEqual(["system", "user"]);
    expect(toolMessages(sent[3])).toEqual([[runCallId, "child answer after the restart"]]);
  });
});
