// The seams a capability is made with: the session object (core.ts) implements each, and a capability's type
// names the ones it needs (for example `LogHost & TimerHost`) instead of listing members. The store reached
// through a seam is the core's (store/): the seam says which of its methods belong to it. It is reached
// through the host because the store opens after the capabilities are made.
import type { InProcessTools } from "../engine/tools/in-process";
import type { Env } from "../env";
import type { AgentConfig } from "../protocol/agent-config";
import type { EventDraft } from "../protocol/events";
import type { Policy } from "../protocol/policy";
import type { SessionView } from "../protocol/views";
import type { FileLedger } from "./files/file-ledger";
import type { PendingWrites } from "./store/pending-writes";
import type { SessionRow, SessionStore } from "./store/session-store";
import type { ChannelStore } from "./streams/channel-store";
import type { SocketHub } from "./streams/socket-hub";

/** The event log: the one way a transition is recorded, the read model it folds into, and its events read back. */
export interface LogHost {
  /**
   * Appends events (projecting them into the turns and actions tables) and applies `mutate`, in one
   * transaction; then folds them into the read model and broadcasts them. Throws, changing nothing, on failure.
   * `snapshot` also stores the read model; `checkpoint` writes the running turn's whole state, and takes the place
   * of one held with waiting events (the same state, written whole).
   */
  commit(drafts: EventDraft[], mutate?: () => void, opts?: { snapshot?: boolean; checkpoint?: () => void }): void;
  /** One SQLite transaction (for writes that append no event). */
  transact<T>(fn: () => T): T;
  /** The read model folded up to the last committed event. */
  view(): SessionView;
  /** Text deltas and held events (tool results, an answer naming calls) that wait a moment to be committed together (pending-writes.ts). */
  readonly pending: Pick<PendingWrites, "deltas" | "hold">;
  readonly store: Pick<SessionStore, "eventsOfTurn" | "lastEventTime" | "lastMemoryLoaded" | "lastSequence" | "readEvents" | "terminalEvent">;
}

/** What the core projects from the log and keeps beside it: the turns and their actions, checkpoints and inbox, and the conversation. */
export interface TurnsHost {
  readonly store: Pick<
    SessionStore,
    | "action"
    | "addToInbox"
    | "appendHistory"
    | "clearInbox"
    | "conversationReads"
    | "decisions"
    | "deleteTurnState"
    | "dropFromInbox"
    | "forkReads"
    | "history"
    | "inbox"
    | "inboxSize"
    | "queuedTurns"
    | "removeTurnMessages"
    | "replaceHistory"
    | "runningTurn"
    | "saveTurnState"
    | "turn"
    | "turnByIdempotencyKey"
    | "turnMessageCount"
    | "turnState"
    | "usageDays"
  >;
}

/** Timers: entries of the schedule table (a capability's `alarms` name the kinds it fires) and the one alarm set at the earliest. */
export interface TimerHost {
  /** Sets the object's alarm at or before the earliest entry (after entries were written). */
  armAlarm(): void;
  readonly store: Pick<SessionStore, "timers">;
}

/** The session itself: its row, what it runs and for whom, the deployment's bindings; a handoff or a version change switches its agent, retention erases it. */
export interface SettingsHost {
  bindings(): Env;
  /** The deployment's in-process tools (createRuntime's `tools`, given to the object's class). */
  inProcessTools(): InProcessTools;
  /** The session's row (it exists once created). */
  row(): SessionRow;
  /** The agent the session runs now (a handoff changes it). */
  agent(): AgentConfig;
  /** The agent the session was opened with (what an agent-bound token is checked against). */
  openedAgent(): string;
  policy(): Policy;
  /** The agent the session runs from now on, recorded with `drafts`. */
  switchAgent(config: AgentConfig, drafts: EventDraft[]): void;
  /** Erases the session (its retention ran out, or a client asked). */
  eraseNow(reason: string): Promise<void>;
}

/** The object's SQLite, from which a capability builds the tables it owns (it is their one writer). */
export interface SqlHost {
  readonly sql: SqlStorage;
}

/** The session's files: the one writer of their rows and blobs (file-ledger.ts). */
export interface FilesHost {
  fileLedger(): FileLedger;
}

/** The session's live readers: its WebSockets and the cursors of its remote channels. */
export interface SocketsHost {
  readonly hub: SocketHub;
  readonly channels: ChannelStore;
}

/** Every seam: what the object is to its capabilities (capabilities.ts connects them). */
export type SessionHosts = LogHost & TurnsHost & TimerHost & SettingsHost & SqlHost & FilesHost & SocketsHost;
