// Types of the client: request bodies come from the server's own zod schemas (type-only imports, so
// nothing of the server is bundled); responses mirror what the routes answer (docs/reference/api.md, GET /openapi.json).
import type { z } from "zod";
import type { AgentConfig, AgentConfigInput } from "../protocol/agent-config";
import { type EventOf, type EventRef, type EventType, isTerminalTurnEvent, type PayloadOf, type RuntimeEvent, type TerminalType } from "../protocol/events";
import type { TerminalEvent } from "../protocol/turn-outcome";

export type { SessionSummary, UsageRow } from "../protocol/session-index";
export type { TerminalEvent, TurnOutcome } from "../protocol/turn-outcome";

import type { SessionSummary, UsageRow } from "../protocol/session-index";

/** A page of GET /v1/sessions. */
export interface SessionPage {
  sessions: SessionSummary[];
  next_cursor: string | null;
}

/** Filters of GET /v1/sessions; `metadata` becomes metadata.<key>=<value> parameters. */
export interface SessionFilters {
  agent?: string;
  status?: string;
  owner?: string;
  metadata?: Record<string, string>;
  created_after?: string | number;
  active_after?: string | number;
  limit?: number;
  cursor?: string;
}

export interface UsageReport {
  from: string;
  to: string;
  group_by: "agent" | "owner" | "day";
  rows: UsageRow[];
}
export type { EventTable } from "../protocol/event-table";
export { ignored, onEvent, sameFor } from "../protocol/event-table";
export { turnOutcome } from "../protocol/turn-outcome";

import type { Policy, PolicySchema } from "../protocol/policy";
import type { PermissionClass } from "../protocol/tool-classes";
import type { SessionView, ThreadStatus, TreeNode, TurnSummary, TurnUsage } from "../protocol/views";
import type { ActionDecisionBody, ActionResolved, InjectMessageBody, InjectResult, InterruptBody, SubmitTurnBody, TurnAccepted } from "../protocol/wire";

export type {
  ActionResolved,
  AgentConfig,
  AgentConfigInput,
  EventOf,
  EventRef,
  EventType,
  InjectResult,
  Policy,
  RuntimeEvent,
  TerminalType,
  ThreadStatus,
  TreeNode,
  TurnSummary,
  TurnUsage,
};

// ---- requests (the server's schemas, as their callers write them) ----

/** `PUT /v1/agents/:name`: an AgentConfig whose `name` may be left out (it defaults to the path name). */
export type AgentPutBody = Omit<AgentConfigInput, "name"> & { name?: string };
/** `POST /v1/sessions`: a registered agent's name or an inline config. */
export interface CreateSessionBody {
  agent: string | AgentConfigInput;
  policy?: z.input<typeof PolicySchema>;
  metadata?: Record<string, unknown>;
}
/** `POST /v1/sessions/:sid/fork`: where to cut the source's log, and optionally another agent and metadata. */
export interface ForkSessionBody {
  at_sequence: number;
  agent?: string | AgentConfigInput;
  metadata?: Record<string, unknown>;
}
/** `POST /v1/sessions/:sid/turns/:turn_id/replay`: fields that replace the recorded agent's, and how tools answer. */
export interface ReplayTurnBody {
  agent?: Partial<AgentConfigInput>;
  tools?: "recorded" | "live";
}
export type SubmitTurnRequest = z.input<typeof SubmitTurnBody>;
export type InjectMessageRequest = z.input<typeof InjectMessageBody>;
export type ActionDecisionRequest = z.input<typeof ActionDecisionBody>;
export type Decision = ActionDecisionRequest["decision"];
export type InterruptRequest = z.input<typeof InterruptBody>;

// ---- responses ----

export interface SessionCreated {
  session_id: string;
  thread_id: string;
}

export interface SessionForked extends SessionCreated {
  from_session: string;
  at_sequence: number;
}

export interface ReplayStarted {
  exec_id: string;
  turn_id: string;
  source_session: string;
  source_turn_id: string;
  at_sequence: number;
}

export type ReplayComparison = PayloadOf<"replay.completed">;

/** `GET /v1/replays/:exec_id`. */
export interface Replay {
  exec_id: string;
  source_session: string;
  source_turn_id: string;
  status: "running" | "completed";
  comparison: ReplayComparison | null;
}

export interface ChannelCursor {
  channel_id: string;
  acked_sequence: number;
  updated_at: number;
}

/** `GET /v1/sessions/:sid`. */
export interface SessionSnapshot {
  session_id: string;
  /** The active agent's config (a handoff changes it). */
  agent: AgentConfig;
  policy: Policy;
  status: ThreadStatus;
  created_at: number;
  metadata: Record<string, unknown>;
  threads: { thread_id: string; status: ThreadStatus; active_turn_id: string | null }[];
  turns: TurnSummary[];
  turn_count: number;
  last_sequence: number;
  channels: ChannelCursor[];
}

/** `GET /v1/sessions/:sid/thread`. */
export interface ThreadView {
  session_id: string;
  thread_id: string;
  status: ThreadStatus;
  active_turn_id: string | null;
  pending_actions: SessionView["pending_actions"];
  queued_turns: string[];
  last_outcome: SessionView["last_outcome"];
  budget: { used: TurnUsage; limits: Record<string, number> };
  last_sequence: number;
}

export type TurnSubmitted = TurnAccepted & { duplicate?: boolean };

export interface InterruptResult {
  interrupted: boolean;
  turn_id: string | null;
}

export interface QueueResult {
  queued: string[];
}

export interface EventsPage {
  events: RuntimeEvent[];
  next_after: number;
  has_more: boolean;
}

export interface ExecutionTree {
  version: 1;
  nodes: TreeNode[];
}

export interface ToolDescription {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  permission_class: PermissionClass;
  parallel_safe: boolean;
  lock: string | null;
}

export interface ToolInventory {
  tools: ToolDescription[];
  policy: Policy;
}

export interface Artifact {
  contentType: string;
  bytes: Uint8Array;
  /** The bytes decoded as UTF-8. */
  text(): string;
}

/** Whether `e` ends its turn (one module decides that for the server and the client alike). */
export function isTerminal(e: RuntimeEvent): e is TerminalEvent {
  return isTerminalTurnEvent(e.type);
}
