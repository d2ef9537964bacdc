// The tables of single capabilities in a session object's SQLite, each behind the named queries of its own
// module, whose capability is its one writer. The store (session-store.ts) is built on them so that a
// capability's slice names the one it uses like any store method, and never the raw `sql` handle.
import type { ToolContext } from "../../engine/tools/types";
import { DerivedSessions } from "../forks/derived-sessions";
import { ForkReads } from "../forks/fork-reads";
import { sqlMemory } from "../memory/memory-store";
import { ReplayRow } from "../replays/replay-row";
import { ScheduleRows } from "../schedules/schedule-rows";
import { SubscriptionRows } from "../subscriptions/subscription-rows";
import { ConversationReads } from "../views/conversation-reads";

export abstract class CapabilityTables {
  readonly schedules: ScheduleRows;
  readonly subscriptions: SubscriptionRows;
  readonly replay: ReplayRow;
  /** The session's forks and replays, erased with it. */
  readonly derived: DerivedSessions;
  /** Reads only: a fork's conversation at one sequence of the log. */
  readonly forkReads: ForkReads;
  /** Reads only: where a turn starts, the newest submissions and rollbacks (the chat's messages and streams). */
  readonly conversationReads: ConversationReads;
  /** The memory_* tools' key-value table. */
  readonly memory: ToolContext["memory"];

  constructor(readonly sql: SqlStorage) {
    this.schedules = new ScheduleRows(sql);
    this.subscriptions = new SubscriptionRows(sql);
    this.replay = new ReplayRow(sql);
    this.derived = new DerivedSessions(sql);
    this.forkReads = new ForkReads(sql);
    this.conversationReads = new ConversationReads(sql);
    this.memory = sqlMemory(sql);
  }
}
