// Types of the client: request bodies and responses are those of the operation declarations
// (src/protocol/operations/, docs/reference/api.md; type-only imports, so nothing of the server is bundled),
// with the agent configs they carry typed as AgentConfig where the schema takes any object.
import type { AgentConfig, AgentConfigInput } from "../protocol/agent-config";
import { type EventOf, type EventRef, type EventType, isTerminalTurnEvent, type PayloadOf, type RuntimeEvent, type TerminalType } from "../protocol/events";
import type { BodyOf, chat, evals, files, QueryOf, ResponseOf, resources, sessions, streams, turns, usage } from "../protocol/operations";
import type { TerminalEvent } from "../views/turn-outcome";

export type { SessionSummary, UsageRow } from "../protocol/session-list";
export type { TerminalEvent, TurnOutcome } from "../views/turn-outcome";

/** A page of GET /v1/sessions. */
export type SessionPage = ResponseOf<typeof sessions.listSessions, 200>;

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

export type UsageReport = ResponseOf<typeof usage.getUsage, 200>;
/** An eval run (docs/guides/evals.md): its status, progress and aggregates per scorer. */
export type EvalRun = ResponseOf<typeof evals.getEvalRun, 200>;
/** A resource's working memory (docs/guides/memory.md). */
export type WorkingMemory = ResponseOf<typeof resources.getMemory, 200>;
export type RecallSearch = ResponseOf<typeof resources.searchMemory, 200>;
export type { EventTable } from "../protocol/event-table";
export { ignored, onEvent, sameFor } from "../protocol/event-table";
export { turnOutcome } from "../views/turn-outcome";

import type { Policy } from "../protocol/policy";
import type { Thread, ThreadStatus, TreeNode, TurnSummary, TurnUsage } from "../protocol/views";
import type { ActionResolved, InjectResult } from "../protocol/wire";

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
export type CreateSessionBody = Omit<BodyOf<typeof sessions.createSession>, "agent"> & { agent: string | AgentConfigInput };
/** `POST /v1/sessions/:sid/fork`: where to cut the source's log, and optionally another agent and metadata. */
export type ForkSessionBody = Omit<BodyOf<typeof sessions.forkSession>, "agent"> & { agent?: string | AgentConfigInput };
/** `POST /v1/sessions/:sid/turns/:turn_id/replay`: fields that replace the recorded agent's, and how tools answer. */
export type ReplayTurnBody = Omit<BodyOf<typeof turns.replayTurn>, "agent"> & { agent?: Partial<AgentConfigInput> };
export type SubmitTurnRequest = BodyOf<typeof turns.submitTurn>;
export type InjectMessageRequest = BodyOf<typeof turns.injectMessage>;
export type ActionDecisionRequest = BodyOf<typeof turns.resolveAction>;
export type Decision = NonNullable<ActionDecisionRequest["decision"]>;
export type InterruptRequest = BodyOf<typeof turns.interrupt>;
/** `GET /v1/sessions/:sid/messages`: a page of the conversation (`limit`, and `before` a message id); none: all of it. */
export type ChatMessagesQuery = QueryOf<typeof chat.getChatMessages>;

// ---- responses ----

export type SessionCreated = ResponseOf<typeof sessions.createSession, 201>;
export type SessionForked = ResponseOf<typeof sessions.forkSession, 201>;
/** What an erasure left: the sessions it could not erase, each with why (none: everything is erased). */
export type ErasureLeft = ResponseOf<typeof sessions.eraseSession, 200>;
export type ReplayStarted = ResponseOf<typeof turns.replayTurn, 201>;
export type ReplayComparison = PayloadOf<"replay.completed">;
/** `GET /v1/replays/:exec_id`. */
export type Replay = ResponseOf<typeof turns.getReplay, 200>;

/** `GET /v1/sessions/:sid`. The active agent's config (a handoff changes it) is `agent`. */
export type SessionSnapshot = Omit<ResponseOf<typeof sessions.getSession, 200>, "agent"> & { agent: AgentConfig };
export type ChannelCursor = SessionSnapshot["channels"][number];
/** `GET /v1/sessions/:sid/thread`. */
export type ThreadView = Thread;

export type TurnSubmitted = ResponseOf<typeof turns.submitTurn, 202>;
export type TurnRegenerated = ResponseOf<typeof turns.regenerateTurn, 202>;
export type InterruptResult = ResponseOf<typeof turns.interrupt, 200>;
export type TurnContinued = ResponseOf<typeof turns.continueTurn, 200>;
export type QueueResult = ResponseOf<typeof turns.removeQueuedTurn, 200>;
/** A page of the log; its events typed by the catalog. */
export type EventsPage = Omit<ResponseOf<typeof streams.getEvents, 200>, "events"> & { events: RuntimeEvent[] };
export type ExecutionTree = ResponseOf<typeof turns.getExecutionTree, 200>;
/** The conversation (or a page of it) as AI SDK UIMessages, oldest first: useChat's initial messages. */
export type ChatMessages = ResponseOf<typeof chat.getChatMessages, 200>;
export type ToolInventory = ResponseOf<typeof sessions.getTools, 200>;
export type ToolDescription = ToolInventory["tools"][number];

export interface Artifact {
  contentType: string;
  bytes: Uint8Array;
  /** The bytes decoded as UTF-8. */
  text(): string;
}

/** A session file's description (`POST`/`GET .../files`), a turn's input part, and a file reference in the log. */
export type { FileRef, InputPart } from "../protocol/input-parts";
export type { FileInfo } from "../protocol/operations/files";
/** A page of a session's files (`GET .../files`). */
export type FilePage = ResponseOf<typeof files.listFiles, 200>;

/** A downloaded session file (or the range of it asked for): its bytes and the headers that describe them. */
export interface DownloadedFile extends Artifact {
  /** 200 for the whole file, 206 for a range. */
  status: number;
  contentDisposition: string | null;
  /** `bytes a-b/size` for a range. */
  contentRange: string | null;
}

/** Whether `e` ends its turn (one module decides that for the server and the client alike). */
export function isTerminal(e: RuntimeEvent): e is TerminalEvent {
  return isTerminalTurnEvent(e.type);
}
