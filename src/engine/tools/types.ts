// What a tool is to the engine: a JSON Schema for the model, governance flags, and an executor.
import type { FileRef } from "../../protocol/input-parts";
import type { RecallHit } from "../../protocol/memory";
import type { PermissionClass } from "../../protocol/tool-classes";

export type JsonSchema = Record<string, unknown>;

export interface ToolContext {
  session_id: string;
  turn_id: string;
  tool_call_id: string;
  /** The sub-agent whose call this is (absent at the top level): with the ids above, what identifies the call. */
  subagent_id?: string;
  /** The call runs again in a replay (docs/guides/fork-and-replay.md): its Idempotency-Key differs from the recorded call's. */
  replay?: boolean;
  /** A webhook call's receipt, reported once the call has settled; it goes into the call's tool.result metadata. */
  receipt?(receipt: WebhookReceipt): void;
  /**
   * Aborted when the turn is interrupted; tools must stop promptly. A non-idempotent tool's is never aborted
   * by the turn: it runs until it settles, and an outcome after the turn's end is recorded late (outliving-calls.ts).
   */
  signal: AbortSignal;
  fetch: typeof fetch;
  now(): number;
  /** TOOL_URL_ALLOWLIST prefixes, re-checked at call time. */
  urlAllowlist: string[];
  /** The session's file tree (paths are already confined to the policy's workspace root). */
  workspace: WorkspaceStore;
  /** The session's key-value memory. */
  memory: MemoryStore;
  /** The memory of the session's resource (absent: the session belongs to no resource). */
  resource?: ResourceMemoryPort;
  /** Reports progress of this call while it runs (MCP notifications/progress); the runtime emits it as mcp.progress. */
  progress?(update: McpProgress): void;
}

/** What became of a webhook call: its Idempotency-Key, the last HTTP status (null: no answer) and the attempts made. */
export interface WebhookReceipt {
  idempotency_key: string;
  status: number | null;
  attempts: number;
}

/** One progress notification of a running MCP tool call (the payload of mcp.progress). */
export interface McpProgress {
  server: string;
  tool: string;
  progress: number;
  total: number | null;
  message: string | null;
}

export interface WorkspaceStore {
  read(path: string): Promise<string | null>;
  /** Returns the bytes written. */
  write(path: string, content: string): Promise<number>;
  list(prefix: string, limit: number): Promise<{ path: string; bytes: number }[]>;
  /** The session's files (uploads, attachments, files tools returned: docs/guides/files.md), oldest first. */
  files(): Promise<FileRef[]>;
  /** A session file's bytes; null when the session has no such file. */
  fileBytes(fileId: string): Promise<Uint8Array | null>;
}

export interface MemoryStore {
  get(key: string): string | null;
  set(key: string, value: string): void;
  list(prefix: string, limit: number): { key: string; bytes: number }[];
}

/** A resource's memory as the tools reach it (docs/guides/memory.md). */
export interface ResourceMemoryPort {
  /** Applies a JSON merge patch to the working memory; throws ToolError (nothing stored) when the result is invalid. */
  updateWorking(patch: Record<string, unknown>, toolCallId: string): Promise<{ version: number; document: unknown }>;
  recall(query: string, limit: number): Promise<RecallHit[]>;
}

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
  permission_class: PermissionClass;
  /** May run concurrently with other parallel-safe calls of the same step. */
  parallel_safe: boolean;
  /** Safe to run again after a crash left its first run without a recorded result. */
  idempotent: boolean;
  /** Calls holding the same lock never run at the same time, even when parallel-safe. */
  lock?: string;
  /** Set on `transfer_to_<agent>` tools: the agent the conversation is handed to. */
  handoff_target?: string;
  /** Set on tools of remote MCP servers: the configured server and the tool's own name there. */
  mcp?: { server: string; tool: string };
  /** Set on registered code tools: the version a turn runs (the inspector shows it on the tool's calls). */
  code_tool?: { version: number };
  /** Tools the loop itself performs (they start sub-agents, ask the user, or run a code-mode script) instead of calling `execute`. */
  loop_handled?: "run_subtask" | "spawn_subagents" | "finish_subtask" | "agent_orchestrate" | "ask_user" | "run_code";
  /**
   * A tool whose result may be a question for the user (a remote A2A task waiting for input): the question,
   * and the arguments of the call that sends the answer (the loop adds `message`, the answer, and `answer_id`).
   */
  asks_user?(output: unknown): { question: string; answer_args: Record<string, unknown> } | null;
  /**
   * A question its result asked went unanswered within the turn (it timed out, the user declined it): what the
   * tool does then (a remote A2A task is cancelled), throwing the call's error result. Absent: the call's result
   * says nobody answered, as ask_user's does. (A question the turn's end drops is cancelled by the session,
   * durably: session/remote-cancels.)
   */
  unanswered?(
    answerArgs: Record<string, unknown>,
    status: "timed_out" | "rejected" | "cancelled" | "interrupted",
    ctx: Pick<ToolContext, "fetch" | "urlAllowlist" | "tool_call_id" | "session_id" | "signal">,
  ): Promise<never>;
  /** Returns the result (a string or JSON value); throws ToolError (or any error) for an error result. */
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

/** The `execute` of tools the loop performs itself (handoffs, sub-agents, orchestration); never called. */
export function runByTheLoop(): Promise<never> {
  return Promise.reject(new Error("this tool is run by the loop, not executed directly"));
}

/** A failure meant for the model: its message becomes the error result. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}
