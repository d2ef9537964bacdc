// One shard of the deployment's session index: the rows, usage days and erase tombstones of the sessions whose
// id hashes to it (index-shards.ts). A session writes only to its own shard; lists and usage read every shard.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { randomId } from "../../ids";
import type { SessionListQuery, SessionSummary, UsageDay, UsageQuery, UsageRow } from "../../protocol/session-list";
import { INDEX_MIGRATIONS, migrate } from "../migrate";
import {
  eraseSession,
  getSession,
  hasAgentSessions,
  type IndexRows,
  importRows,
  isErased,
  listSessions,
  storedBytes,
  upsertSession,
  usageTotals,
} from "./index-shard-tables";

export class IndexShardObject extends DurableObject<Env> {
  /** Test hooks (TEST_HOOKS=1 only): index writes (erasures too) that fail before they land, and writes held until released. */
  private failingWrites = 0;
  private held: { until: Promise<void>; release: () => void } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      migrate(ctx.storage, INDEX_MIGRATIONS);
    });
  }

  /** `openedAgent`: the agent the session was opened with, kept beside the row for agent-bound tokens' listings. */
  async indexSession(row: SessionSummary, days: UsageDay[], openedAgent: string): Promise<void> {
    if (this.held) await this.held.until;
    if (this.failingWrites > 0) {
      this.failingWrites -= 1;
      throw new Error("index write failed (test hook)");
    }
    // A session erased meanwhile (a late write from its last turn) is not indexed again.
    if (isErased(this.ctx.storage.sql, row.session_id)) return;
    this.ctx.storage.transactionSync(() => upsertSession(this.ctx.storage.sql, row, days, openedAgent));
  }

  async eraseFromIndex(sessionId: string): Promise<void> {
    if (this.failingWrites > 0) {
      this.failingWrites -= 1;
      throw new Error("index erase failed (test hook)");
    }
    this.ctx.storage.transactionSync(() => eraseSession(this.ctx.storage.sql, sessionId, randomId("era"), Date.now()));
  }

  async hasAgentSessions(name: string): Promise<boolean> {
    return hasAgentSessions(this.ctx.storage.sql, name);
  }

  async isErased(sessionId: string): Promise<boolean> {
    return isErased(this.ctx.storage.sql, sessionId);
  }

  async indexedSession(sessionId: string): Promise<SessionSummary | null> {
    return getSession(this.ctx.storage.sql, sessionId);
  }

  async listSessions(query: SessionListQuery): Promise<SessionSummary[]> {
    return listSessions(this.ctx.storage.sql, query);
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    return usageTotals(this.ctx.storage.sql, query);
  }

  async storedBytes(query: Pick<UsageQuery, "agent" | "owner">): Promise<number> {
    return storedBytes(this.ctx.storage.sql, query);
  }

  /** Rows moved here from elsewhere (the registry's index before sharding, or a smaller shard set). */
  async importRows(rows: IndexRows): Promise<void> {
    this.ctx.storage.transactionSync(() => importRows(this.ctx.storage.sql, rows));
  }

  /** Test hook: the next `n` index writes fail. */
  async failIndexWrites(n: number): Promise<void> {
    this.testHooks();
    this.failingWrites = n;
  }

  /** Test hook: index writes wait (as behind a slow shard) until `releaseIndexWrites`. */
  async holdIndexWrites(): Promise<void> {
    this.testHooks();
    let release = () => {};
    const until = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.held = { until, release };
  }

  async releaseIndexWrites(): Promise<void> {
    this.testHooks();
    this.held?.release();
    this.held = null;
  }

  private testHooks(): void {
    if (this.env.TEST_HOOKS !== "1") throw new Error("test hooks are off");
  }
}
