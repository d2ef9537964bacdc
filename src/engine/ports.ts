// The ports a running turn talks to its host through (the session object implements them in
// src/session/runner/turn-ports.ts and turn-setup.ts): what the turn runs with, and every way it reaches
// the world; the engine imports nothing of Cloudflare.
import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import type { AgentConfig } from "../protocol/agent-config";
import type { BudgetMaxima } from "../protocol/budget-maxima";
import type { EventDraft, TerminalDraft } from "../protocol/events";
import type { FileRef } from "../protocol/input-parts";
import type { QuotaVerdict } from "../protocol/quotas";
import type { ReadFile } from "./file-parts";
import type { OrchestrationLimits } from "./orchestration/types";
import type { PriceOverrides } from "./pricing";
import type { RecordedAnswer } from "./recorded-decisions";
import type { SaveFile } from "./tool-files";
import type { ScriptRunner, ScriptSeen } from "./tools/code-mode";
import type { ToolContext, ToolDefinition } from "./tools/types";
import type { RecordedDecision, TurnState } from "./turn-state";

export interface TurnSetup {
  config: AgentConfig;
  /** The version of `config` (a sub-agent's is its parent's); absent outside a session. */
  agent_version?: number | null;
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
  /** Runs code-mode scripts (run_code) in a sandbox; absent: the deployment has none, and run_code fails saying so. */
  runScript?: ScriptRunner;
  /** A replayed turn: what the recorded run_code call with these arguments saw of Date.now() and Math.random(). */
  recordedScript?: (args: unknown) => ScriptSeen | null;
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

/** A model call's most (a reservation) or actual spend; usd null: a model of the call has no known price. */
export type QuotaSpend = { usd: number | null; input_tokens: number; output_tokens: number };

/**
 * The quotas of the turn (docs/guides/quotas.md, quota-reservation.ts): its start is counted, each model call
 * reserves its most before it is made and settles after. Absent, or `applies` null: no quota applies.
 */
export interface QuotaPort {
  /** What the quotas that apply to this turn limit (null: none applies, and nothing is asked). */
  applies(): Promise<{ spend: boolean; turns: boolean } | null>;
  /**
   * Counts the turn's start (turns, concurrent_turns); the same turn again (resumed) counts once. `over`: the
   * quotas a principal continued the paused turn past, which count it whatever their limits (and do not hold it
   * when their object does not answer); every other quota is checked.
   */
  begin(over?: readonly string[]): Promise<QuotaVerdict>;
  /**
   * Reserves a call's most under `id`, against every quota that applies, or none of them; `over` as for begin.
   * `start`: the turn's start is counted with it when not counted yet (one request to each quota object for both).
   */
  reserve(id: string, most: QuotaSpend, options?: { over?: readonly string[]; start?: boolean }): Promise<QuotaVerdict>;
  /** Who continued the paused turn past which quota (turn.continued after its last turn.paused, not yet resumed); null: nobody. */
  continued(): { by: string; quota_id: string } | null;
  /** Replaces reservation `id` by the call's actual spend (null: nothing was spent, it is given back); never fails. */
  settle(id: string, actual: QuotaSpend | null): void;
  /** Settles reservation `id` of a call a restart cut (made by an earlier executor of the turn), as settle does. */
  settleCut(id: string, actual: QuotaSpend | null): void;
  /** Resolves at `until` or after the recheck interval, whichever is sooner; soon after the turn is continued; at once when `signal` aborts. */
  sleep(until: number | null, signal: AbortSignal): Promise<void>;
}

/** How long events may wait for what follows them (TurnPorts.emit). */
export type Hold = "step" | "task";

export interface TurnPorts extends TurnSignals {
  /**
   * Appends events durably; with a state, checkpoints it in the same transaction. Throws if the turn was taken away
   * (interrupted). `hold`: more events of the same moment are on their way, so these may wait to be written with
   * them; whatever is written next takes them first. "step": the results of calls still running, the next model
   * call's start (held briefly); "task": the starts of the calls an answer names, which follow in the same task
   * unless something waits on I/O first (held only until this task's end, so the answer is never written later).
   */
  emit(events: EventDraft[], state?: TurnState, hold?: Hold): void;
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
  quota?: QuotaPort;
  tool: Pick<ToolContext, "session_id" | "fetch" | "urlAllowlist" | "workspace" | "memory" | "resource">;
}
