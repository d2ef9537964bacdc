// What the parts of a session object (queue, approvals, turn runner) share: its storage, its one way to
// record a transition (`commit`), and the session's settings. The object implements it; each part takes
// only its `SessionSlice` of it.
import type { InProcessTools } from "../engine/tools/in-process";
import type { Env } from "../env";
import type { AgentConfig } from "../protocol/agent-config";
import type { EventDraft } from "../protocol/events";
import type { Policy } from "../protocol/policy";
import type { SessionView } from "../protocol/views";
import type { FileLedger } from "./files/file-ledger";
import type { SessionRow, SessionStore } from "./store/session-store";

export interface SessionContext {
  /** The deployment's bindings and settings. */
  bindings(): Env;
  /** The deployment's in-process tools (createRuntime's `tools`, given to the object's class). */
  inProcessTools(): InProcessTools;
  readonly store: SessionStore;
  /** The object's SQLite, from which each capability builds the tables it owns (it is their one writer). */
  readonly sql: SqlStorage;
  /** The session's row (it exists once created). */
  row(): SessionRow;
  /** The agent the session runs now (a handoff changes it). */
  agent(): AgentConfig;
  /** The agent the session was opened with (what an agent-bound token is checked against). */
  openedAgent(): string;
  policy(): Policy;
  /** The one writer of the session's files (file-ledger.ts). */
  fileLedger(): FileLedger;
  /** The read model folded up to the last committed event. */
  view(): SessionView;
  /**
   * Appends events (projecting them into the turns and actions tables) and applies `mutate`, in one
   * transaction; then folds them into the read model and broadcasts them. Throws, changing nothing, on failure.
   * `snapshot` also stores the read model; `checkpoint` writes the running turn's whole state, and takes the place
   * of one held with waiting events (the same state, written whole).
   */
  commit(drafts: EventDraft[], mutate?: () => void, opts?: { snapshot?: boolean; checkpoint?: () => void }): void;
  /** One SQLite transaction (for writes that append no event). */
  transact<T>(fn: () => T): T;
  /** Sets the object's one alarm at or before the earliest entry of the schedule table. */
  armAlarm(): void;
}

/**
 * What one part of the session object uses of it: the members `K` of the context and, of its store, only the
 * methods `M` it calls. The store is reached through the context because it opens after the parts are made.
 */
export type SessionSlice<K extends Exclude<keyof SessionContext, "store">, M extends keyof SessionStore = never> = Pick<SessionContext, K> & {
  readonly store: Pick<SessionStore, M>;
};

/** While a turn is active the object re-arms this alarm; it resumes a turn whose executor is gone. */
export const HEARTBEAT_MS = 30_000;
