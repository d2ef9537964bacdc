// What every part of a running turn shares: the ports to the world, the turn's budget, and the level
// (the root agent, or a sub-agent inside it) a piece of work belongs to.

import type { JSONSchema7, LanguageModelV3 } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import type { AgentConfig, TurnBudget } from "../protocol/agent-config";
import type { BudgetMaxima } from "../protocol/budget-maxima";
import { errorMessage } from "../protocol/errors";
import type { TurnErrorCode } from "../protocol/event-shapes";
import type { EventDraft, TerminalDraft } from "../protocol/events";
import type { GuardrailStage } from "../protocol/guardrails";
import type { FileRef } from "../protocol/input-parts";
import { redactCredentials } from "../protocol/redact";
import type { ReadFile } from "./file-parts";
import type { ModelTool } from "./model-stream";
import type { OrchestrationLimits } from "./orchestration/types";
import { costOf, type PriceOverrides } from "./pricing";
import type { RecordedAnswer } from "./recorded-decisions";
import type { SaveFile } from "./tool-files";
import { withInjectedArgs } from "./tools/injected-args";
import type { ToolContext, ToolDefinition } from "./tools/types";
import type { BudgetUsed, ChildRun, RecordedDecision, TurnState, Usage } from "./turn-state";

export interface TurnSetup {
  config: AgentConfig;
  /** The executor's model (config.model). */
  model: LanguageModelV3;
  tools: Map<string, ToolDefinition>;
  /** Earlier turns of the thread, as model messages. */
  history: ModelMessage[];
  /** Resolves other model strings (planning_model). */
  resolveModel(spec: string): LanguageModelV3;
  /** Limits of agent_orchestrate in this session (defaults when absent). */
  orchestration?: OrchestrationLimits;
  /** The deployment's own model prices (MODEL_PRICES). */
  prices?: PriceOverrides;
  /** The deployment's maxima of the raisable budget limits (BUDGET_MAX_*; defaults when absent). */
  budgetMaxima?: BudgetMaxima;
  /** The session's key for the provider's prompt cache (OpenAI's prompt_cache_key). */
  cacheKey?: string;
  /** The resource's working memory as the system prompt shows it (read at the turn's start). */
  working_memory?: string;
  /** What automatic recall found in the resource's earlier conversations, as the system prompt shows it. */
  recalled?: string;
  /** The deployment's provider keys, replaced in any provider error text an event records (redactCredentials). */
  secrets?: readonly string[];
  /** A replayed turn: the recorded decision on a call that asks for approval or an answer, if the recording has one. */
  recordedDecision?: (toolName: string, args: unknown) => RecordedAnswer | null;
}

/** A live message recorded in the session's inbox for the running turn; `seq` orders the inbox. */
export type InjectedMessage = {
  seq: number;
  message_id: string;
  content: string;
  /** Files sent with it (references; the model call reads their bytes). */
  files?: FileRef[];
};

/**
 * Signals from outside the running turn. Each is recorded durably by whoever received it (an inbox row, an
 * action.resolved event) and read here by the loop, which alone applies them to the turn's state, at defined
 * points: injected messages before each model call, decisions between tool calls and before suspending.
 */
export interface TurnSignals {
  /** Messages injected into this turn after inbox position `after`, oldest first. */
  injected(after: number): InjectedMessage[];
  /** Decisions recorded for this turn's approvals, by action id. */
  decisions(): ReadonlyMap<string, RecordedDecision>;
}

export interface TurnPorts extends TurnSignals {
  /**
   * Appends events durably; with a state, checkpoints it in the same transaction. Throws if the turn was taken away
   * (interrupted). `gather`: more events of the same moment are on their way (the results of calls still running,
   * the next model call's start), so these may be held briefly and written with them; whatever is written next
   * takes them first.
   */
  emit(events: EventDraft[], state?: TurnState, gather?: boolean): void;
  /** Appends the terminal event, moves the turn's messages to the history and clears the checkpoint, atomically. */
  finish(event: TerminalDraft, state: TurnState): void;
  /** Makes `agent` the session's active agent, durably, and returns the setup to continue with; throws if it cannot. */
  handoff(agent: string, reason: string | undefined): Promise<TurnSetup>;
  /** Replaces the thread history (after compaction) together with `event`, durably. */
  replaceHistory(history: ModelMessage[], event: EventDraft, state: TurnState): void;
  /** Records an approval request: its action.required event (the durable action and its deadline follow from it). */
  requestApproval(event: EventDraft, state: TurnState): void;
  /** The turn waits for human decisions (its state says since when): checkpoint it and let the executor go; a decision resumes it. */
  suspend(state: TurnState): void;
  /**
   * Records a session-level event after the turn may have ended (tool.result.late: outliving-calls.ts), whoever
   * owns the turn now; throws when the session is gone.
   */
  recordLate(event: EventDraft): void;
  /** Reads a session file (a turn's attachment) for the model; null when it is gone. */
  readFile: ReadFile;
  /** Stores a file a tool returned as a session file (tool-files.ts). */
  saveFile: SaveFile;
  /** Stores a payload too large for the log (in R2) and returns its artifact id. */
  spill(content: string, about: { turn_id: string; tool_call_id: string; tool_name: string; content_type: string }): Promise<string>;
  /** Runs a registered agent as its own child session `exec_id` and resolves with that turn's outcome. */
  runAgent(request: { exec_id: string; agent: string; input: string; timeout_ms: number; signal: AbortSignal; depth: number }): Promise<{
    status: "success" | "failed";
    output?: unknown;
    error?: string;
  }>;
  /** The registered agents (for an orchestration planner and plan validation). */
  listAgents(): Promise<{ name: string; description: string }[]>;
  now(): number;
  newId(prefix: string): string;
  signal: AbortSignal;
  tool: Pick<ToolContext, "session_id" | "fetch" | "urlAllowlist" | "workspace" | "memory" | "resource">;
}

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

/** An error's message as an event may record it: the provider keys and credential-shaped strings replaced. */
export function recordedError(setup: TurnSetup, err: unknown): string {
  return redactCredentials(errorMessage(err), setup.secrets);
}

/** The turn as every level sees it. */
export class Turn {
  /** Aborted on interrupt, and when the budget is exhausted (which stops every running sub-agent). */
  readonly signal: AbortSignal;
  exceeded: BudgetExceededError | null = null;
  /** The turn's messages with their files read (file-parts.ts), each kept for the turn's later model calls. */
  readonly withFiles = new WeakMap<ModelMessage, ModelMessage>();
  /** The models that failed over in this turn: its later calls skip them (model-breaker.ts). */
  readonly failedModels = new Set<string>();
  private readonly controller = new AbortController();

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
    const timer = setTimeout(
      () => {
        try {
          this.exceed("wall_clock", this.budget.max_wall_clock_ms, this.elapsed());
        } catch {
          // exceed() aborted the turn; the loop reports it
        }
      },
      Math.max(0, this.budget.max_wall_clock_ms - this.elapsed()) + 1,
    );
    return () => clearTimeout(timer);
  }

  /** Appends events for `level` (adding its envelope fields), checkpointing the whole turn unless `checkpoint` is false. */
  emit(level: Level, events: EventDraft[], checkpoint = true, gather = false): void {
    // The store fills in the root's envelope (parent_id null, depth 0); sub-agents add theirs.
    const envelope =
      level.depth === 0 ? {} : { parent_id: level.parent_id, depth: level.depth, ...(level.subagent_id ? { subagent_id: level.subagent_id } : {}) };
    // Progress since the last restart: the count of resumes without progress starts again.
    if (checkpoint && events.some((e) => e.type === "model.completed" || e.type === "tool.result")) this.root.recoveries = 0;
    this.ports.emit(
      events.map((e) => ({ ...envelope, ...e })),
      checkpoint ? this.root : undefined,
      gather,
    );
  }
}

function addUsage(a: Usage, b: Usage): Usage {
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
