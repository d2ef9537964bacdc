// agent_orchestrate without a Durable Object: the plan schema and its validation
// (src/engine/orchestration/plan.ts), the safe {{ bindings.<key> }} renderer, and the orchestration run
// (src/engine/orchestration/run.ts) driven through runTurn with MemoryPorts standing in for the child
// sessions: sequencing and bindings, parallel groups (collect, first_success, concurrency caps), failures,
// the planner path, limits (depth, steps, parallel, timeouts) and cancellation.
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { runTurn, type TurnPorts, type TurnSetup } from "../../src/engine/loop";
import { PlanSchema, render, renderDeep, TemplateError, validatePlan } from "../../src/engine/orchestration/plan";
import { DEFAULT_ORCHESTRATION_LIMITS, type OrchestrationLimits } from "../../src/engine/orchestration/types";
import { agentOrchestrate } from "../../src/engine/tools/orchestrate-tool";
import { newTurnState } from "../../src/engine/turn-state";
import { verifyLog } from "../../src/engine/verify-log";
import { MemoryPorts } from "./support/memory-ports";
import { callTools, finishPart, makeSetup, type Reply, say, scriptedModel, TURN_ID, textParts, usage } from "./support/mock-model";

// ---------------------------------------------------------------------------------------------------
// plan.ts: schema and validation

const AGENTS = new Set(["researcher", "writer", "critic"]);
const LIMITS = { max_steps: 12, max_parallel: 4 };

const agent = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: "agent", agent: "researcher", ...extra });
const group = (id: string, steps: unknown[], extra: Record<string, unknown> = {}) => ({ id, type: "parallel", steps, ...extra });

function errorsOf(input: unknown, agents: ReadonlySet<string> = AGENTS, limits = LIMITS): string[] {
  const checked = validatePlan(input, agents, limits);
  if (!("errors" in checked)) throw new Error(`expected errors, got a plan: ${JSON.stringify(checked.plan)}`);
  return checked.errors;
}

describe("validatePlan", () => {
  it("accepts sequential steps and parallel groups, defaulting a group's merge to collect", () => {
    const input = {
      steps: [
        agent("s1", { prompt: "Find facts", result_key: "facts", timeout_ms: 5_000 }),
        group("g1", [agent("a", { agent: "writer" }), agent("b", { agent: "critic", with: { text: "{{ bindings.facts }}" } })], { max_concurrency: 2 }),
      ],
    };
    const checked = validatePlan(input, AGENTS, LIMITS);
    expect(checked).toEqual({
      plan: {
        steps: [
          { id: "s1", type: "agent", agent: "researcher", prompt: "Find facts", result_key: "facts", timeout_ms: 5_000 },
          {
            id: "g1",
            type: "parallel",
            merge: "collect",
            max_concurrency: 2,
            steps: [
              { id: "a", type: "agent", agent: "writer" },
              { id: "b", type: "agent", agent: "critic", with: { text: "{{ bindings.facts }}" } },
            ],
          },
        ],
      },
    });
  });

  it("refuses a step id used twice, naming it, also across a group and its children", () => {
    expect(errorsOf({ steps: [agent("s1"), agent("s1")] })).toEqual(['step "s1": the id is used twice']);
    expect(errorsOf({ steps: [agent("x"), group("g1", [agent("y"), agent("x")])] })).toEqual(['step "x": the id is used twice']);
    expect(errorsOf({ steps: [group("g1", [agent("g1")])] })).toEqual(['step "g1": the id is used twice']);
  });

  it("refuses a result_key used twice, naming the step and the key", () => {
    const errors = errorsOf({ steps: [agent("s1", { result_key: "facts" }), agent("s2", { result_key: "facts" })] });
    expect(errors).toEqual(['step "s2": result_key "facts" is used twice']);
    // A group's key and one of its children's keys share the namespace too.
    expect(errorsOf({ steps: [group("g1", [agent("a", { result_key: "k" })], { result_key: "k" })] })).toEqual(['step "a": result_key "k" is used twice']);
  });

  it("refuses an unknown agent, naming the step (inside a group too)", () => {
    expect(errorsOf({ steps: [agent("s1", { agent: "nobody" })] })).toEqual(['step "s1": unknown agent "nobody"']);
    expect(errorsOf({ steps: [group("g1", [agent("a"), agent("b", { agent: "ghost" })])] })).toEqual(['step "b": unknown agent "ghost"']);
  });

  it("refuses an empty parallel group, naming the group", () => {
    const errors = errorsOf({ steps: [agent("s1"), group("g_empty", [])] });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/at least one step/);
    expect(errors[0], "the error names the group by its id").toContain("g_empty");
  });

  it("caps the steps of a parallel group (at the cap is fine), naming the group", () => {
    const four = [agent("a"), agent("b"), agent("c"), agent("d")];
    expect("plan" in validatePlan({ steps: [group("g1", four)] }, AGENTS, LIMITS)).toBe(true);
    expect(errorsOf({ steps: [group("g1", [...four, agent("e")])] })).toEqual(['step "g1": 5 steps in a parallel group (at most 4)']);
    expect(errorsOf({ steps: [group("g1", [agent("a"), agent("b")])] }, AGENTS, { max_steps: 12, max_parallel: 1 })).toEqual([
      'step "g1": 2 steps in a parallel group (at most 1)',
    ]);
  });

  it("caps the agent steps of a plan, counting those inside groups", () => {
    const steps = (n: number) => Array.from({ length: n }, (_, i) => agent(`s${i}`));
    expect("plan" in validatePlan({ steps: steps(12) }, AGENTS, LIMITS)).toBe(true);
    expect(errorsOf({ steps: steps(13) })).toEqual(["plan: 13 agent steps (at most 12)"]);
    // 10 sequential + a group of 3 = 13 agent steps (the group itself is not counted).
    expect(errorsOf({ steps: [...steps(10), group("g", [agent("a"), agent("b"), agent("c")])] })).toEqual(["plan: 13 agent steps (at most 12)"]);
  });

  it("reports every problem at once", () => {
    const errors = errorsOf({ steps: [agent("s1", { agent: "nobody", result_key: "k" }), agent("s1", { result_key: "k" })] });
    expect(errors).toEqual(['step "s1": unknown agent "nobody"', 'step "s1": the id is used twice', 'step "s1": result_key "k" is used twice']);
  });

  it("refuses what does not fit the schema, with the path of the field", () => {
    expect(errorsOf(null)[0]).toMatch(/^plan: /);
    expect(errorsOf("do things")[0]).toMatch(/^plan: /);
    expect(errorsOf([agent("s1")])[0]).toMatch(/^plan: /);
    expect(errorsOf({ steps: [] })).toEqual(["plan.steps: a plan needs at least one step"]);
    expect(errorsOf({ steps: [agent("s1"), { id: "s2", type: "agent" }] }).join("\n")).toMatch(/^step "s2" agent: /m);
    expect(errorsOf({ steps: [{ id: "s1", type: "shell", command: "rm -rf /" }] }).join("\n")).toMatch(/^step "s1" type: /m);
    expect(errorsOf({ steps: [agent("s1", { eval: "1+1" })] }).join("\n")).toMatch(/eval/); // strict: unknown fields are refused
    expect(errorsOf({ steps: [agent("bad id!")] }).join("\n")).toMatch(/^step "bad id!" id: /m);
    expect(errorsOf({ steps: [agent("s1", { result_key: "not-an-identifier" })] }).join("\n")).toMatch(/^step "s1" result_key: /m);
    expect(errorsOf({ steps: [group("g1", [agent("a")], { merge: "majority" })] }).join("\n")).toMatch(/^step "g1" merge: /m);
    // A group holds agent steps only (no nested groups).
    expect(errorsOf({ steps: [group("g1", [group("g2", [agent("a")])])] }).join("\n")).toMatch(/^step "g2"/m);
    expect(errorsOf({ steps: [agent("s1", { timeout_ms: 10 })] }).join("\n")).toMatch(/^step "s1" timeout_ms: /m);
  });

  it("PlanSchema is the same check without the registry", () => {
    expect(PlanSchema.safeParse({ steps: [agent("s1", { agent: "anyone" })] }).success).toBe(true);
    expect(PlanSchema.safeParse({ steps: [agent("s1")], extra: 1 }).success).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------
// plan.ts: templates

describe("render", () => {
  const bindings = { facts: "Paris is in France", n: 42, ok: true, none: null, obj: { a: { b: "deep" }, list: [1, 2] }, list: ["x", "y"] };

  it("replaces {{ bindings.<key> }} and {{ bindings.a.b }} with the bound value, spacing optional", () => {
    expect(render("Summarize: {{ bindings.facts }}.", bindings)).toBe("Summarize: Paris is in France.");
    expect(render("{{bindings.facts}}|{{   bindings.facts   }}", bindings)).toBe("Paris is in France|Paris is in France");
    expect(render("b={{ bindings.obj.a.b }}", bindings)).toBe("b=deep");
    expect(render("{{ bindings.list.1 }}", bindings)).toBe("y");
    expect(render("no templates here", bindings)).toBe("no templates here");
  });

  it("writes non-strings as JSON", () => {
    expect(render("{{ bindings.n }} {{ bindings.ok }} {{ bindings.none }}", bindings)).toBe("42 true null");
    expect(render("{{ bindings.obj }}", bindings)).toBe('{"a":{"b":"deep"},"list":[1,2]}');
    expect(render("{{ bindings.list }}", bindings)).toBe('["x","y"]');
  });

  it("refuses an unknown binding, naming it", () => {
    expect(() => render("{{ bindings.missing }}", bindings)).toThrow(TemplateError);
    expect(() => render("{{ bindings.missing }}", bindings)).toThrow('unknown binding "missing"');
    expect(() => render("{{ bindings.obj.a.c }}", bindings)).toThrow('unknown binding "obj.a.c"');
    expect(() => render("{{ bindings.facts.length }}", bindings)).toThrow(TemplateError); // no walking into strings
    expect(() => render("{{ bindings.none.x }}", bindings)).toThrow(TemplateError);
    expect(() => render("{{ bindings.x }}", {})).toThrow(TemplateError);
  });

  it("never reaches prototypes or evaluates anything", () => {
    for (const t of [
      "{{ bindings.__proto__ }}",
      "{{ bindings.constructor }}",
      "{{ bindings.toString }}",
      "{{ bindings.hasOwnProperty }}",
      "{{ bindings.obj.__proto__ }}",
      "{{ bindings.obj.constructor.constructor }}",
      "{{ bindings.__proto__.polluted }}",
    ]) {
      expect(() => render(t, bindings), t).toThrow(TemplateError);
    }
    // Anything that is not a bindings path is left exactly as written, never run.
    for (const t of [
      "{{ constructor }}",
      "{{ this }}",
      "{{ 1 + 1 }}",
      "{{ bindings.n + 1 }}",
      "{{ bindings['facts'] }}",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-literal lookalike the plan must refuse
      "${1 + 1}",
      "{{#each bindings}}x{{/each}}",
      "{{ process.env }}",
    ]) {
      expect(render(t, bindings), t).toBe(t);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("inserts values verbatim: no re-rendering, no replacement patterns", () => {
    const tricky = { a: "{{ bindings.b }}", b: "secret", dollars: "$& $1 $$ $`" };
    expect(render("{{ bindings.a }}", tricky)).toBe("{{ bindings.b }}");
    expect(render("[{{ bindings.dollars }}]", tricky)).toBe("[$& $1 $$ $`]");
  });

  it("an own __proto__ key from JSON is plain data", () => {
    const parsed = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    expect(render("{{ bindings.__proto__.x }}", parsed)).toBe("1");
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("renderDeep renders every string of a `with` value and nothing else", () => {
    const value = { text: "{{ bindings.facts }}", nested: [{ n: "{{ bindings.n }}" }, 7, null, false], "{{ bindings.facts }}": "key stays" };
    expect(renderDeep(value, bindings)).toEqual({
      text: "Paris is in France",
      nested: [{ n: "42" }, 7, null, false],
      "{{ bindings.facts }}": "key stays",
    });
    expect(() => renderDeep({ deep: ["{{ bindings.nope }}"] }, bindings)).toThrow(TemplateError);
  });
});

// ---------------------------------------------------------------------------------------------------
// run.ts through runTurn

type Outcome = Awaited<ReturnType<TurnPorts["runAgent"]>>;
type AgentRequest = Parameters<TurnPorts["runAgent"]>[0];
/** How a (possibly slow) agent answers: it sees the abort signal of its step. */
type Behaviour = (input: string, signal: AbortSignal) => Promise<Outcome>;

/** MemoryPorts whose agents may take time: tracks how many run at once and which were cancelled. */
class AsyncPorts extends MemoryPorts {
  readonly behaviours = new Map<string, Behaviour>();
  inFlight = 0;
  maxInFlight = 0;
  /** Agents (by step input) whose run was aborted. */
  readonly cancelled: string[] = [];

  override async runAgent(request: AgentRequest): Promise<Outcome> {
    const behaviour = this.behaviours.get(request.agent);
    if (!behaviour) return super.runAgent(request);
    const { signal, ...recorded } = request;
    this.agentRuns.push(recorded);
    if (signal.aborted) throw signal.reason;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await behaviour(request.input, signal);
    } catch (err) {
      if (signal.aborted) this.cancelled.push(request.agent);
      throw err;
    } finally {
      this.inFlight -= 1;
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first (as a cancelled child does). */
function resolveAfter<T>(ms: number, signal: AbortSignal, value: T): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => resolve(value), ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

const ok = (output: unknown) => () => ({ status: "success" as const, output });
const failing = (error: string) => () => ({ status: "failed" as const, error });

function portsWith(agents: Record<string, (input: string) => Outcome>, Ports: typeof MemoryPorts = MemoryPorts): MemoryPorts {
  const ports = new Ports();
  for (const [name, answer] of Object.entries(agents)) ports.agents.set(name, { description: `The ${name} agent`, answer });
  return ports;
}

const CALL = "orc_1";

function setupFor(model: MockLanguageModelV3, orchestration?: Partial<OrchestrationLimits>, config: Record<string, unknown> = {}): TurnSetup {
  const setup = makeSetup({ model, tools: [agentOrchestrate], config });
  return orchestration ? { ...setup, orchestration: { ...DEFAULT_ORCHESTRATION_LIMITS, ...orchestration } } : setup;
}

/** The orchestrating model: one agent_orchestrate call with `args`, then a final answer. */
function orchestrating(args: Record<string, unknown>, ...more: Reply[]): MockLanguageModelV3 {
  return scriptedModel(callTools([[CALL, "agent_orchestrate", args]]), ...(more.length ? more : [say("Done.")]));
}

async function run(args: Record<string, unknown>, ports: MemoryPorts, orchestration?: Partial<OrchestrationLimits>, model = orchestrating(args)) {
  await runTurn(newTurnState(TURN_ID, "Coordinate the agents.", ports.now()), setupFor(model, orchestration), ports);
  return { ports, model, ...readOutcome(ports) };
}

function readOutcome(ports: MemoryPorts) {
  const result = ports.events.find((e) => e.type === "tool.result" && e.tool_call_id === CALL);
  const statuses = ports.events.filter((e) => e.type === "run.status" && e.payload.scope === "agent_orchestrate");
  return {
    result: result ? { output: result.payload.output as any, is_error: result.payload.is_error as boolean } : undefined,
    statuses,
    phases: statuses.map((e) => e.payload.phase as string),
  };
}

/** The log as the session would store it (sequence and ids filled in), checked by the same verifier the e2e tests use. */
function expectSoundLog(ports: MemoryPorts): void {
  const stored = ports.events.map((e, i) => ({ ...e, sequence: i + 1, event_id: `evt_${i + 1}`, turn_id: e.turn_id ?? TURN_ID }));
  expect(verifyLog(stored as never)).toEqual([]);
  expect(ports.refused).toEqual([]);
}

describe("runOrchestration: sequential steps", () => {
  it("runs steps in order, binds each output for later prompts, and reports every step", async () => {
    const ports = portsWith({ researcher: ok("Paris is the capital of France."), writer: ok("A short summary.") });
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: "researcher", prompt: "Find facts about {{ bindings.topic }}", result_key: "facts" },
        { id: "s2", type: "agent", agent: "writer", prompt: "Summarize: {{ bindings.facts }}" },
      ],
    };
    const { result, statuses, phases, model } = await run({ plan, bindings: { topic: "Paris" } }, ports);
    expectSoundLog(ports);
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "Done.", stop_reason: "final_answer" } });

    expect(ports.agentRuns.map((r) => [r.agent, r.input, r.depth])).toEqual([
      ["researcher", "Find facts about Paris", 1],
      ["writer", "Summarize: Paris is the capital of France.", 1],
    ]);
    const [e1, e2] = ports.agentRuns.map((r) => r.exec_id);
    expect(e1).toMatch(/^ses_/);
    expect(e2).toMatch(/^ses_/);
    expect(e1).not.toBe(e2);

    expect(result).toEqual({
      output: {
        success: true,
        steps: [
          { id: "s1", type: "agent", status: "success", exec_id: e1, output: "Paris is the capital of France.", error: null, elapsed_ms: expect.any(Number) },
          { id: "s2", type: "agent", status: "success", exec_id: e2, output: "A short summary.", error: null, elapsed_ms: expect.any(Number) },
        ],
        bindings: { topic: "Paris", facts: "Paris is the capital of France.", s2: "A short summary." },
      },
      is_error: false,
    });

    // The state machine, as run.status events under the call; each dispatch names its step and child.
    expect(phases).toEqual(["plan_init", "plan_validated", "dispatching_step", "dispatching_step", "completed"]);
    for (const e of statuses) expect(e).toMatchObject({ tool_call_id: CALL, parent_id: CALL, depth: 1 });
    const dispatches = statuses.filter((e) => e.payload.phase === "dispatching_step");
    expect(dispatches.map((e) => [e.subagent_id, e.payload.step_id, e.payload.exec_id, e.payload.agent])).toEqual([
      [e1, "s1", e1, "researcher"],
      [e2, "s2", e2, "writer"],
    ]);
    // All of it happens between the call's start and its result.
    const started = ports.events.findIndex((e) => e.type === "tool.started" && e.tool_call_id === CALL);
    const ended = ports.events.findIndex((e) => e.type === "tool.result" && e.tool_call_id === CALL);
    for (const e of statuses) expect(ports.events.indexOf(e)).toBeGreaterThan(started);
    for (const e of statuses) expect(ports.events.indexOf(e)).toBeLessThan(ended);

    // The model gets the whole result back.
    const fed = model.doStreamCalls[1]!.prompt.at(-1)!;
    expect(fed.role).toBe("tool");
    expect(JSON.stringify(fed.content)).toContain("A short summary.");
  });

  it("renders `with` inputs into the step's input; a step with neither prompt nor with still gets an input", async () => {
    const ports = portsWith({ researcher: ok({ city: "Paris", population: 2_100_000 }), writer: ok("ok"), critic: ok("fine") });
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: "researcher", prompt: "Look up the city", result_key: "city" },
        {
          id: "s2",
          type: "agent",
          agent: "writer",
          prompt: "Write about {{ bindings.city.city }}",
          with: { data: "{{ bindings.city }}", count: 3, tags: ["{{ bindings.city.city }}"] },
        },
        { id: "s3", type: "agent", agent: "critic" },
      ],
    };
    const { result } = await run({ plan }, ports);
    expect(result!.output.success).toBe(true);
    expect(ports.agentRuns[1]!.input).toBe(
      `Write about Paris\n\nInputs:\n${JSON.stringify({ data: '{"city":"Paris","population":2100000}', count: 3, tags: ["Paris"] }, null, 2)}`,
    );
    expect(ports.agentRuns[2]!.input).toBe("Go ahead.");
    // Structured outputs bind as they are.
    expect(result!.output.bindings.city).toEqual({ city: "Paris", population: 2_100_000 });
  });

  it("a failing step fails the plan: later steps are skipped and never run; the result still goes back to the model", async () => {
    const ports = portsWith({ researcher: failing("the model is down"), writer: ok("never") });
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: "researcher", result_key: "facts" },
        { id: "s2", type: "agent", agent: "writer", prompt: "{{ bindings.facts }}" },
        { id: "g3", type: "parallel", steps: [{ id: "s3", type: "agent", agent: "writer" }] },
      ],
    };
    const { result, phases, model } = await run({ plan }, ports);
    expectSoundLog(ports);
    expect(ports.agentRuns.map((r) => r.agent)).toEqual(["researcher"]);
    expect(result!.is_error).toBe(true);
    expect(result!.output).toEqual({
      success: false,
      steps: [
        {
          id: "s1",
          type: "agent",
          status: "failed",
          exec_id: ports.agentRuns[0]!.exec_id,
          output: null,
          error: "the model is down",
          elapsed_ms: expect.any(Number),
        },
        { id: "s2", type: "agent", status: "skipped", exec_id: null, output: null, error: null, elapsed_ms: 0 },
        { id: "g3", type: "parallel", status: "skipped", exec_id: null, output: null, error: null, elapsed_ms: 0 },
      ],
      bindings: {},
      errors: ["s1: the model is down"],
    });
    expect(phases).toEqual(["plan_init", "plan_validated", "dispatching_step", "failed"]);
    // The turn goes on: the model sees the error result and answers.
    expect(model.doStreamCalls).toHaveLength(2);
    expect(ports.terminal).toMatchObject({ type: "turn.completed", payload: { output: "Done." } });
  });

  it("an unknown binding at run time fails that step before any child starts", async () => {
    const ports = portsWith({ researcher: ok("x"), writer: ok("y") });
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: "writer", prompt: "Use {{ bindings.later }}" },
        { id: "s2", type: "agent", agent: "researcher", result_key: "later" },
      ],
    };
    const { result, phases } = await run({ plan }, ports);
    expect(ports.agentRuns).toEqual([]);
    expect(result!.output.steps).toEqual([
      { id: "s1", type: "agent", status: "failed", exec_id: null, output: null, error: 'unknown binding "later"', elapsed_ms: 0 },
      { id: "s2", type: "agent", status: "skipped", exec_id: null, output: null, error: null, elapsed_ms: 0 },
    ]);
    expect(result!.output.errors).toEqual(['s1: unknown binding "later"']);
    expect(phases).toEqual(["plan_init", "plan_validated", "failed"]);
  });

  it("a port that throws fails the step (not the turn)", async () => {
    const ports = new AsyncPorts();
    ports.agents.set("researcher", { description: "r", answer: ok("unused") });
    ports.behaviours.set("researcher", async () => {
      throw new Error("RPC to the child failed");
    });
    const { result } = await run({ plan: { steps: [{ id: "s1", type: "agent", agent: "researcher" }] } }, ports);
    expect(result!.is_error).toBe(true);
    expect(result!.output.steps[0]).toMatchObject({ id: "s1", status: "failed", error: "RPC to the child failed" });
    expect(ports.terminal?.type).toBe("turn.completed");
  });
});

describe("runOrchestration: parallel groups", () => {
  const groupPlan = (merge: "collect" | "first_success", steps: unknown[], extra: Record<string, unknown> = {}, after: unknown[] = []) => ({
    steps: [{ id: "g1", type: "parallel", merge, steps, ...extra }, ...after],
  });

  it("collect: runs every step, keys outputs by result_key or step id, and binds the group for later steps", async () => {
    const ports = portsWith({ researcher: ok("facts!"), critic: ok("critique!"), writer: ok("report") });
    const plan = groupPlan(
      "collect",
      [
        { id: "a", type: "agent", agent: "researcher", result_key: "facts" },
        { id: "b", type: "agent", agent: "critic" },
      ],
      { result_key: "review" },
      [{ id: "s2", type: "agent", agent: "writer", prompt: "Facts: {{ bindings.review.facts }}; critique: {{ bindings.review.b }}" }],
    );
    const { result, phases, statuses } = await run({ plan }, ports);
    expectSoundLog(ports);
    expect(result!.is_error).toBe(false);
    const [g, s2] = result!.output.steps;
    expect(g).toEqual({
      id: "g1",
      type: "parallel",
      status: "success",
      exec_id: null,
      output: { facts: "facts!", b: "critique!" },
      error: null,
      elapsed_ms: expect.any(Number),
      children: [
        { id: "a", type: "agent", status: "success", exec_id: expect.stringMatching(/^ses_/), output: "facts!", error: null, elapsed_ms: expect.any(Number) },
        {
          id: "b",
          type: "agent",
          status: "success",
          exec_id: expect.stringMatching(/^ses_/),
          output: "critique!",
          error: null,
          elapsed_ms: expect.any(Number),
        },
      ],
    });
    expect(s2).toMatchObject({ id: "s2", status: "success", output: "report" });
    expect(ports.agentRuns.find((r) => r.agent === "writer")!.input).toBe("Facts: facts!; critique: critique!");
    expect(result!.output.bindings).toEqual({ review: { facts: "facts!", b: "critique!" }, s2: "report" });
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
    expect(statuses.find((e) => e.payload.phase === "awaiting_results")!.payload).toMatchObject({ step_id: "g1", steps: ["a", "b"] });
    expect(statuses.find((e) => e.payload.phase === "merging_results")!.payload).toMatchObject({ step_id: "g1" });
  });

  it("collect runs the steps concurrently", async () => {
    const ports = new AsyncPorts();
    for (const name of ["researcher", "critic", "writer"]) {
      ports.agents.set(name, { description: name, answer: ok(name) });
      ports.behaviours.set(name, (_input, signal) => resolveAfter(20, signal, { status: "success", output: `${name} done` }));
    }
    const steps = ["researcher", "critic", "writer"].map((agentName, i) => ({ id: `p${i}`, type: "agent", agent: agentName }));
    const { result } = await run({ plan: groupPlan("collect", steps) }, ports);
    expect(result!.output.success).toBe(true);
    expect(ports.maxInFlight).toBe(3);
  });

  it("collect with a failing step: the group is partial, the plan fails, later steps are skipped, errors are listed", async () => {
    const ports = portsWith({ researcher: ok("facts!"), critic: failing("critic crashed"), writer: ok("never") });
    const plan = groupPlan(
      "collect",
      [
        { id: "a", type: "agent", agent: "researcher" },
        { id: "b", type: "agent", agent: "critic" },
      ],
      {},
      [{ id: "s2", type: "agent", agent: "writer" }],
    );
    const { result, phases } = await run({ plan }, ports);
    expectSoundLog(ports);
    expect(result!.is_error).toBe(true);
    const out = result!.output;
    expect(out.success).toBe(false);
    expect(out.steps[0]).toMatchObject({ id: "g1", type: "parallel", status: "partial", output: { a: "facts!", b: null }, error: "b: critic crashed" });
    expect(out.steps[0].children.map((c: any) => [c.id, c.status, c.error])).toEqual([
      ["a", "success", null],
      ["b", "failed", "critic crashed"],
    ]);
    expect(out.steps[1]).toMatchObject({ id: "s2", status: "skipped" });
    expect(out.errors).toEqual(["g1: b: critic crashed"]);
    expect(out.bindings).toEqual({});
    expect(ports.agentRuns.map((r) => r.agent).sort()).toEqual(["critic", "researcher"]);
    expect(phases.at(-1)).toBe("failed");
    expect(phases).toContain("merging_results");
  });

  it("collect where every step fails: the group is failed", async () => {
    const ports = portsWith({ researcher: failing("r down"), critic: failing("c down") });
    const plan = groupPlan("collect", [
      { id: "a", type: "agent", agent: "researcher" },
      { id: "b", type: "agent", agent: "critic" },
    ]);
    const { result } = await run({ plan }, ports);
    expect(result!.output.steps[0]).toMatchObject({ status: "failed", error: "a: r down; b: c down" });
  });

  it("first_success, one at a time: the first success wins and the rest are skipped without running", async () => {
    const ports = portsWith({ researcher: failing("no luck"), critic: ok("critic wins"), writer: ok("never") });
    const plan = groupPlan(
      "first_success",
      [
        { id: "a", type: "agent", agent: "researcher" },
        { id: "b", type: "agent", agent: "critic" },
        { id: "c", type: "agent", agent: "writer" },
      ],
      { max_concurrency: 1, result_key: "winner" },
    );
    const { result } = await run({ plan }, ports);
    expectSoundLog(ports);
    expect(ports.agentRuns.map((r) => r.agent)).toEqual(["researcher", "critic"]);
    const g = result!.output.steps[0];
    expect(g).toMatchObject({ id: "g1", status: "success", output: "critic wins", error: null });
    expect(g.children.map((c: any) => [c.id, c.status])).toEqual([
      ["a", "failed"],
      ["b", "success"],
      ["c", "skipped"],
    ]);
    expect(result!.output).toMatchObject({ success: true, bindings: { winner: "critic wins" } });
    expect(result!.is_error).toBe(false);
  });

  it("first_success with no success fails the group", async () => {
    const ports = portsWith({ researcher: failing("r down"), critic: failing("c down") });
    const plan = groupPlan("first_success", [
      { id: "a", type: "agent", agent: "researcher" },
      { id: "b", type: "agent", agent: "critic" },
    ]);
    const { result } = await run({ plan }, ports);
    expect(result!.output.steps[0]).toMatchObject({ status: "failed", output: null, error: "a: r down; b: c down" });
    expect(result!.output.success).toBe(false);
  });

  it("first_success, concurrently: the first to succeed wins and the still-running steps are cancelled, not counted as failures", async () => {
    const ports = new AsyncPorts();
    ports.agents.set("researcher", { description: "slow", answer: ok("unused") });
    ports.agents.set("critic", { description: "fast", answer: ok("unused") });
    ports.behaviours.set("researcher", (_, signal) => resolveAfter(60_000, signal, { status: "success", output: "too late" }));
    ports.behaviours.set("critic", (_, signal) => resolveAfter(10, signal, { status: "success", output: "fast answer" }));
    const plan = groupPlan(
      "first_success",
      [
        { id: "slow", type: "agent", agent: "researcher" },
        { id: "fast", type: "agent", agent: "critic" },
      ],
      { result_key: "winner" },
    );
    const started = Date.now();
    const { result } = await run({ plan }, ports);
    expect(Date.now() - started).toBeLessThan(5_000);
    expectSoundLog(ports);
    expect(ports.cancelled).toEqual(["researcher"]); // the slow one saw its signal abort
    const g = result!.output.steps[0];
    expect(g).toMatchObject({ id: "g1", type: "parallel", status: "success", output: "fast answer" });
    expect(g.children.find((c: any) => c.id === "fast")).toMatchObject({ status: "success", output: "fast answer" });
    expect(g.children.find((c: any) => c.id === "slow").status).not.toBe("success");
    expect(result!.output).toMatchObject({ success: true, bindings: { winner: "fast answer" } });
    expect(result!.is_error).toBe(false);
  });

  const slowPorts = () => {
    const ports = new AsyncPorts();
    for (const name of ["researcher", "critic", "writer"]) {
      ports.agents.set(name, { description: name, answer: ok(name) });
      ports.behaviours.set(name, (_, signal) => resolveAfter(15, signal, { status: "success", output: name }));
    }
    return ports;
  };
  const four = ["researcher", "critic", "writer", "researcher"].map((agentName, i) => ({ id: `p${i}`, type: "agent", agent: agentName }));

  it("a group runs at most max_concurrency steps at once, and at most the deployment's max_parallel", async () => {
    const byGroup = slowPorts();
    const r1 = await run({ plan: groupPlan("collect", four, { max_concurrency: 2 }) }, byGroup);
    expect(r1.result!.output.success).toBe(true);
    expect(byGroup.agentRuns).toHaveLength(4);
    expect(byGroup.maxInFlight).toBe(2);

    const byDeployment = slowPorts();
    const r2 = await run({ plan: groupPlan("collect", four.slice(0, 3), { max_concurrency: 10 }) }, byDeployment, { max_parallel: 3 });
    expect(r2.result!.output.success).toBe(true);
    expect(byDeployment.maxInFlight).toBe(3);
  });

  it("the call's max_parallel throttles how many steps of a group run at once; it does not refuse a larger group", async () => {
    const byCall = slowPorts();
    const r3 = await run({ plan: groupPlan("collect", four.slice(0, 3)), max_parallel: 1 }, byCall);
    expect(r3.result!.output.errors ?? []).toEqual([]);
    expect(r3.result!.output.success).toBe(true);
    expect(byCall.agentRuns).toHaveLength(3);
    expect(byCall.maxInFlight).toBe(1);
  });
});

describe("runOrchestration: refusals and limits", () => {
  it("a plan that fails validation runs nothing: an error result with the errors, phases plan_init → failed", async () => {
    const ports = portsWith({ researcher: ok("x") });
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: "researcher" },
        { id: "s1", type: "agent", agent: "ghost" },
      ],
    };
    const { result, phases, statuses } = await run({ plan }, ports);
    expectSoundLog(ports);
    expect(ports.agentRuns).toEqual([]);
    expect(result).toEqual({
      output: { success: false, steps: [], bindings: {}, errors: ['step "s1": the id is used twice', 'step "s1": unknown agent "ghost"'] },
      is_error: true,
    });
    expect(phases).toEqual(["plan_init", "failed"]);
    expect(statuses.at(-1)!.payload.errors).toEqual(result!.output.errors);
  });

  it("neither plan nor prompt is refused", async () => {
    const ports = portsWith({ researcher: ok("x") });
    const { result } = await run({}, ports);
    expect(result).toMatchObject({ output: { success: false, errors: ["give either a plan or a prompt"] }, is_error: true });
    expect(ports.agentRuns).toEqual([]);
  });

  it("uses the session's step and parallel limits", async () => {
    const ports = portsWith({ researcher: ok("x") });
    const steps = [1, 2, 3].map((i) => ({ id: `s${i}`, type: "agent", agent: "researcher" }));
    expect((await run({ plan: { steps } }, ports, { max_steps: 2 })).result!.output.errors).toEqual(["plan: 3 agent steps (at most 2)"]);
    const grouped = { steps: [{ id: "g", type: "parallel", steps }] };
    expect((await run({ plan: grouped }, portsWith({ researcher: ok("x") }), { max_parallel: 2 })).result!.output.errors).toEqual([
      'step "g": 3 steps in a parallel group (at most 2)',
    ]);
  });

  it("depth: a session at the depth limit cannot orchestrate; one below it dispatches children one level deeper", async () => {
    const plan = { steps: [{ id: "s1", type: "agent", agent: "researcher" }] };

    const atLimit = portsWith({ researcher: ok("x") });
    const refused = await run({ plan }, atLimit, { depth: 3, max_depth: 3 });
    expectSoundLog(atLimit);
    expect(atLimit.agentRuns).toEqual([]);
    expect(refused.result).toEqual({ output: { success: false, steps: [], bindings: {}, errors: ["orchestration depth limit reached (3)"] }, is_error: true });
    expect(refused.phases).toEqual(["failed"]);
    expect(atLimit.terminal?.type).toBe("turn.completed"); // the refusal is a result, not a crash

    const below = portsWith({ researcher: ok("x") });
    const allowed = await run({ plan }, below, { depth: 2, max_depth: 3 });
    expect(allowed.result!.output.success).toBe(true);
    expect(below.agentRuns.map((r) => r.depth)).toEqual([3]);

    const topLevel = portsWith({ researcher: ok("x") });
    await run({ plan }, topLevel); // no orchestration setup: the defaults, depth 0
    expect(topLevel.agentRuns.map((r) => r.depth)).toEqual([1]);

    const lowered = portsWith({ researcher: ok("x") });
    expect((await run({ plan }, lowered, { depth: 1, max_depth: 1 })).result!.output.errors).toEqual(["orchestration depth limit reached (1)"]);
  });

  it("per-step timeouts: the step's own, else the call's, else the default, never beyond the turn's remaining wall clock", async () => {
    const ports = portsWith({ researcher: ok("x") });
    const plan = {
      steps: [
        { id: "own", type: "agent", agent: "researcher", timeout_ms: 5_000 },
        { id: "call", type: "agent", agent: "researcher" },
      ],
    };
    await run({ plan, timeout_ms: 7_000 }, ports);
    expect(ports.agentRuns.map((r) => r.timeout_ms)).toEqual([5_000, 7_000]);

    const defaults = portsWith({ researcher: ok("x") });
    await run({ plan: { steps: [{ id: "s", type: "agent", agent: "researcher" }] } }, defaults);
    expect(defaults.agentRuns[0]!.timeout_ms).toBe(120_000);

    const tight = portsWith({ researcher: ok("x") });
    const model = orchestrating({ plan: { steps: [{ id: "s", type: "agent", agent: "researcher", timeout_ms: 600_000 }] } });
    await runTurn(newTurnState(TURN_ID, "go", tight.now()), setupFor(model, undefined, { budget: { max_wall_clock_ms: 30_000 } }), tight);
    expect(tight.agentRuns[0]!.timeout_ms).toBe(30_000);
  });
});

describe("runOrchestration: a plan written by the planner", () => {
  const PLAN = { steps: [{ id: "s1", type: "agent", agent: "researcher", prompt: "Research {{ bindings.topic }}", result_key: "facts" }] };

  function plannerModel(plannerText: string) {
    return scriptedModel(
      callTools([[CALL, "agent_orchestrate", { prompt: "Research the topic, then stop.", bindings: { topic: "tides" } }]]),
      say(plannerText),
      say("Done."),
    );
  }

  it("a planner model call (no tools) turns the prompt into a plan, which then runs", async () => {
    const ports = portsWith({ researcher: ok("Tides come from the moon."), writer: ok("unused") });
    const model = plannerModel(JSON.stringify(PLAN));
    const { result, phases } = await run({}, ports, undefined, model);
    expectSoundLog(ports);
    expect(phases).toEqual(["plan_init", "planner_active", "plan_validated", "dispatching_step", "completed"]);
    expect(result).toMatchObject({ output: { success: true, bindings: { topic: "tides", facts: "Tides come from the moon." } }, is_error: false });
    expect(ports.agentRuns.map((r) => r.input)).toEqual(["Research tides"]);

    // The planner call: its own model.requested with phase "planner", no tools offered, the agents listed.
    const requested = ports.ofType("model.requested").map((e) => e.payload.phase);
    expect(requested).toEqual(["executor", "planner", "executor"]);
    const planner = model.doStreamCalls[1]! as LanguageModelV3CallOptions;
    expect(planner.tools ?? []).toEqual([]);
    const system = planner.prompt.find((m) => m.role === "system");
    expect(system?.content).toContain("- researcher: The researcher agent");
    expect(system?.content).toContain("- writer: The writer agent");
    expect(JSON.stringify(planner.prompt.filter((m) => m.role === "user"))).toContain("Research the topic, then stop.");
    // The planner's exchange stays out of the conversation: the executor's next prompt has no planner text.
    expect(JSON.stringify(model.doStreamCalls[2]!.prompt)).not.toContain("Reply with only a JSON object");
  });

  it("a plan in a ```json fence is accepted", async () => {
    const ports = portsWith({ researcher: ok("ok") });
    const { result } = await run({}, ports, undefined, plannerModel(`\`\`\`json\n${JSON.stringify(PLAN)}\n\`\`\``));
    expect(result!.output.success).toBe(true);
  });

  it("prose instead of JSON is refused with a clear error; nothing runs", async () => {
    const ports = portsWith({ researcher: ok("ok") });
    const { result, phases } = await run({}, ports, undefined, plannerModel("Sure! First I will ask the researcher, then..."));
    expectSoundLog(ports);
    expect(result).toEqual({
      output: { success: false, steps: [], bindings: { topic: "tides" }, errors: ["the planner did not return a JSON plan"] },
      is_error: true,
    });
    expect(phases).toEqual(["plan_init", "planner_active", "failed"]);
    expect(ports.agentRuns).toEqual([]);
  });

  it("JSON that is not a valid plan is refused with the validation errors; nothing runs", async () => {
    for (const bad of [
      { plan: "do it" },
      { steps: [{ id: "s1", agent: "researcher" }] },
      { steps: [{ id: "s1", type: "agent", agent: "agent_orchestrate" }] },
      [1, 2],
    ]) {
      const ports = portsWith({ researcher: ok("ok") });
      const { result, phases } = await run({}, ports, undefined, plannerModel(JSON.stringify(bad)));
      expect(result!.is_error, JSON.stringify(bad)).toBe(true);
      expect(result!.output.success).toBe(false);
      expect(result!.output.errors.length).toBeGreaterThan(0);
      expect(result!.output.errors.join("\n")).toMatch(/^(plan[.:]|step ")/m);
      expect(phases).toEqual(["plan_init", "planner_active", "failed"]);
      expect(ports.agentRuns).toEqual([]);
    }
  });

  it("the planner uses planning_model when the agent sets one", async () => {
    const ports = portsWith({ researcher: ok("ok") });
    const executor = scriptedModel(callTools([[CALL, "agent_orchestrate", { prompt: "Plan it." }]]), say("Done."));
    const planning = scriptedModel(say(JSON.stringify(PLAN)));
    const setup: TurnSetup = {
      ...setupFor(executor, undefined, { planning_model: "openai:gpt-4o-mini" }),
      resolveModel: (spec) => (spec === "openai:gpt-4o-mini" ? planning : executor),
    };
    await runTurn(newTurnState(TURN_ID, "go", ports.now()), setup, ports);
    expect(planning.doStreamCalls).toHaveLength(1);
    expect(executor.doStreamCalls).toHaveLength(2);
    expect(ports.ofType("model.requested").map((e) => e.payload)).toContainEqual({
      model: "openai:gpt-4o-mini",
      phase: "planner",
      request_hash: expect.any(String),
      reservation: expect.objectContaining({ max_output_tokens: 4096 }),
    });
    // Bindings are not given here; the plan's template then fails the step at run time.
    expect(readOutcome(ports).result!.output.steps[0]).toMatchObject({ status: "failed", error: 'unknown binding "topic"' });
  });

  it("a planner model error ends the orchestration in the failed phase with an error result", async () => {
    const ports = portsWith({ researcher: ok("ok") });
    const model = scriptedModel(
      callTools([[CALL, "agent_orchestrate", { prompt: "Plan it." }]]),
      [...textParts([]), { type: "error", error: new Error("planner provider exploded") }, finishPart("error", usage(0, 0))],
      say("Done."),
    );
    const { result, phases } = await run({}, ports, undefined, model);
    expectSoundLog(ports);
    expect(ports.agentRuns).toEqual([]);
    expect(result!.is_error).toBe(true);
    expect(JSON.stringify(result!.output)).toContain("planner provider exploded");
    expect(phases, "planner failure jumps to failed").toEqual(["plan_init", "planner_active", "failed"]);
    expect(result!.output).toMatchObject({ success: false, steps: [] });
  });
});

describe("runOrchestration: cancellation", () => {
  it("interrupting the turn while a step runs aborts the step's child and writes nothing more", async () => {
    const ports = new AsyncPorts();
    ports.agents.set("researcher", { description: "slow", answer: ok("unused") });
    ports.behaviours.set("researcher", (_, signal) => resolveAfter(60_000, signal, { status: "success", output: "too late" }));
    ports.agents.set("writer", { description: "w", answer: ok("never") });
    ports.onEvent = (e) => {
      if (e.type === "run.status" && e.payload.phase === "dispatching_step") setTimeout(() => ports.abort(new Error("stop")), 5);
    };
    const plan = {
      steps: [
        { id: "s1", type: "agent", agent: "researcher" },
        { id: "s2", type: "agent", agent: "writer" },
      ],
    };
    const model = orchestrating({ plan });
    await expect(runTurn(newTurnState(TURN_ID, "go", ports.now()), setupFor(model), ports)).rejects.toThrow();
    expect(ports.cancelled).toEqual(["researcher"]);
    expect(ports.agentRuns.map((r) => r.agent)).toEqual(["researcher"]);
    expect(ports.refused).toEqual([]); // nothing was written after the interrupt
    expect(ports.events.some((e) => e.type === "tool.result")).toBe(false);
    expect(readOutcome(ports).phases).toEqual(["plan_init", "plan_validated", "dispatching_step"]);
    expect(model.doStreamCalls).toHaveLength(1);
  });
});
