// What every part of a running turn shares: the ports to the world, the turn's budget, and the level
// (the root agent, or a sub-agent inside it) a piece of work belongs to.

import type { JSONSchema7 } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import type { TurnBudget } from "../protocol/agent-config";
import { errorMessage } from "../protocol/errors";
import type { TurnErrorCode } from "../protocol/event-shapes";
import type { EventDraft } from "../protocol/events";
import type { GuardrailStage } from "../protocol/guardrails";
import type { QuotaVerdict } from "../protocol/quotas";
import { redactCredentials } from "../protocol/redact";
import type { ModelTool } from "./model-stream";
import type { Hold, TurnPorts, TurnSetup } from "./ports";
import { costOf, type PriceOverrides } from "./pricing";
import { withInjectedArgs } from "./tools/injected-args";
import type { BudgetUsed, ChildRun, TurnState, Usage } from "./turn-state";

/** What a level runs with; a handoff replaces the root's mid-turn. */
export interface Run {
  setup: TurnSetup;
  /** The setup's tools as the model is offered them. */
  modelTools: ModelTool[];
}

/** One loop of the turn: the root agent (depth 0) or a sub-agent. */
export interface Level {
  state: TurnState;
  run: Run;
  depth: number;
  /** The tool call that spawned this level (null at the root). */
  parent_id: string | null;
  subagent_id?: string;
  /** Model calls this level may make (root: max_steps; sub-agents: max_iterations_per_level). */
  maxSteps: number;
  /** Set when this level is a sub-agent. */
  child?: ChildRun;
}

export type Outcome =
  | { kind: "answer"; output: unknown }
  | { kind: "max_steps"; output: unknown }
  | { kind: "budget_limit"; output: unknown }
  | { kind: "waiting" }
  /** schema_not_satisfied: a sub-agent's only (it finishes through finish_subtask); the root's are TurnError codes. */
  | { kind: "failed"; code: TurnErrorCode | "schema_not_satisfied"; message: string; guardrail?: { stage: GuardrailStage; rule: string } };

export type BudgetReason = "subtasks" | "llm_calls" | "tool_calls" | "wall_clock" | "tokens" | "bytes" | "depth" | "cost";

export class BudgetExceededError extends Error {
  constructor(
    readonly reason: BudgetReason,
    readonly limit: number,
    readonly observed: number,
  ) {
    super(`Turn budget exceeded: ${reason} (limit ${limit}, observed ${observed})`);
    this.name = "BudgetExceededError";
  }
}

export class ModelCallError extends Error {}

/** A quota refused the turn (quota-reservation.ts): it ends turn.failed with the verdict's code. */
export class QuotaRefusal extends Error {
  constructor(readonly verdict: Extract<QuotaVerdict, { ok: false }>) {
    super(verdict.message);
    this.name = "QuotaRefusal";
  }
}

/** An error's message as an event may record it: the provider keys and credential-shaped strings replaced. */
export function recordedError(setup: TurnSetup, err: unknown): string {
  return redactCredentials(errorMessage(err), setup.secrets);
}

/** The turn as every level sees it. */
export class Turn {
  /** Aborted on interrupt, and when the budget is exhausted (which stops every running sub-agent). */
  readonly signal: AbortSignal;
  exceeded: BudgetExceededError | null = null;
  refused: QuotaRefusal | null = null;
  /** The turn's messages with their files read (file-parts.ts), each kept for the turn's later model calls. */
  readonly withFiles = new WeakMap<ModelMessage, ModelMessage>();
  /** The models that failed over in this turn: its later calls skip them (model-breaker.ts). */
  readonly failedModels = new Set<string>();
  private readonly controller = new AbortController();
  private wallTimer: ReturnType<typeof setTimeout> | null = null;
  /** Waits outside the turn under way (outside()), and since when. */
  private away = { count: 0, since: 0 };

  constructor(
    readonly root: TurnState,
    readonly ports: TurnPorts,
    readonly budget: TurnBudget,
    /** Runs one level to its outcome (the loop's; injected so sub-agents and tools need not import the loop). */
    readonly runLevel: (level: Level, turn: Turn) => Promise<Outcome>,
  ) {
    this.signal = this.controller.signal;
    if (ports.signal.aborted) this.controller.abort(ports.signal.reason);
    else ports.signal.addEventListener("abort", () => this.controller.abort(ports.signal.reason), { once: true });
  }

  get used(): BudgetUsed {
    return (this.root.budget_used ??= { llm_calls: 0, tool_calls: 0, subtasks: 0 });
  }

  /** Records the first exhausted limit, stops everything, and throws. */
  exceed(reason: BudgetReason, limit: number, observed: number): never {
    this.exceeded ??= new BudgetExceededError(reason, limit, observed);
    this.controller.abort(this.exceeded);
    throw this.exceeded;
  }

  /** A quota refused the turn: stops everything, and throws (the loop records turn.failed). */
  refuse(verdict: Extract<QuotaVerdict, { ok: false }>): never {
    this.refused ??= new QuotaRefusal(verdict);
    this.controller.abort(this.refused);
    throw this.refused;
  }

  /** Counts one more of `what` against its limit. */
  charge(what: "llm_calls" | "tool_calls" | "subtasks", n = 1): void {
    const limit =
      what === "llm_calls" ? this.budget.max_total_llm_calls : what === "tool_calls" ? this.budget.max_total_tool_calls : this.budget.max_total_subtasks;
    if (this.used[what] + n > limit) this.exceed(what, limit, this.used[what] + n);
    this.used[what] += n;
  }

  /**
   * A model call's usage: added to its level's state and to the root's, its cost (null: no known price) to the
   * root's. The caller records cost.recorded, then calls checkCost().
   */
  addUsage(state: TurnState, modelName: string, usage: Usage, prices: PriceOverrides | undefined): number | null {
    state.usage = addUsage(state.usage, usage);
    if (state !== this.root) this.root.usage = addUsage(this.root.usage, usage);
    const cost_usd = costOf(modelName, usage, prices);
    if (cost_usd !== null) this.root.cost_usd = (this.root.cost_usd ?? 0) + cost_usd;
    return cost_usd;
  }

  /** Money is a budget too, over the whole tree of the turn (sub-agents add to the root's cost). */
  checkCost(): void {
    const spent = this.root.cost_usd ?? 0;
    if (this.budget.max_cost_usd !== undefined && spent > this.budget.max_cost_usd) this.exceed("cost", this.budget.max_cost_usd, spent);
  }

  /** Wall-clock time of the turn so far, not counting time spent waiting for humans. */
  elapsed(): number {
    return this.ports.now() - this.root.started_at - (this.root.waited_ms ?? 0);
  }

  checkWallClock(): void {
    if (this.elapsed() > this.budget.max_wall_clock_ms) this.exceed("wall_clock", this.budget.max_wall_clock_ms, this.elapsed());
  }

  /** Ends the turn at the wall-clock limit even when nothing reaches a check (a model stream that stalls). */
  armWallClock(): () => void {
    if (this.wallTimer !== null) clearTimeout(this.wallTimer);
    this.wallTimer = setTimeout(
      () => {
        try {
          this.exceed("wall_clock", this.budget.max_wall_clock_ms, this.elapsed());
        } catch {
          // exceed() aborted the turn; the loop reports it
        }
      },
      Math.max(0, this.budget.max_wall_clock_ms - this.elapsed()) + 1,
    );
    return () => {
      if (this.wallTimer !== null) clearTimeout(this.wallTimer);
      this.wallTimer = null;
    };
  }

  /** Waits for `p` (a quota's room) with the wall clock stopped: like waiting for people, it does not count. */
  async outside<T>(p: Promise<T>): Promise<T> {
    if (this.away.count++ === 0) {
      this.away.since = this.ports.now();
      if (this.wallTimer !== null) clearTimeout(this.wallTimer);
    }
    try {
      return await p;
    } finally {
      if (--this.away.count === 0) {
        this.root.waited_ms = (this.root.waited_ms ?? 0) + (this.ports.now() - this.away.since);
        if (this.wallTimer !== null) this.armWallClock();
      }
    }
  }

  /** Appends events for `level` (adding its envelope fields), checkpointing the whole turn unless `checkpoint` is false. */
  emit(level: Level, events: EventDraft[], checkpoint = true, hold?: Hold): void {
    // The store fills in the root's envelope (parent_id null, depth 0); sub-agents add theirs.
    const envelope =
      level.depth === 0 ? {} : { parent_id: level.parent_id, depth: level.depth, ...(level.subagent_id ? { subagent_id: level.subagent_id } : {}) };
    // Progress since the last restart: the count of resumes without progress starts again.
    if (checkpoint && events.some((e) => e.type === "model.completed" || e.type === "tool.result")) this.root.recoveries = 0;
    this.ports.emit(
      events.map((e) => ({ ...envelope, ...e })),
      checkpoint ? this.root : undefined,
      hold,
    );
  }
}

export function addUsage(a: Usage, b: Usage): Usage {
  const cached = (a.cached_input_tokens ?? 0) + (b.cached_input_tokens ?? 0);
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    ...(cached > 0 ? { cached_input_tokens: cached } : {}),
  };
}

export function toModelTools(setup: TurnSetup): ModelTool[] {
  // Schemas only: the runtime dispatches calls itself.
  return [...setup.tools.values()].map((t) => ({
    type: "function",
    name: t.name,
    description: t.description,
    inputSchema: withInjectedArgs(t.parameters, setup.config.injected_tool_args) as JSONSchema7,
  }));
}
