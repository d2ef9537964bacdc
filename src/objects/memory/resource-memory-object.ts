// One resource's memory (docs/guides/memory.md): a Durable Object per resource (an end user or account), so memory outlives
// sessions and scales with resources. It holds the working memory documents with their latest versions, the ids of
// the sessions opened for the resource (what erasing it with its sessions erases), and the recall index.
import { DurableObject } from "cloudflare:workers";
import { type DocumentProblem, documentProblems, type Json, mergePatch } from "../../engine/memory/working-memory";
import type { JsonSchema } from "../../engine/tools/types";
import type { Env } from "../../env";
import type { RecallEntry, RecallHit } from "../../protocol/memory";
import { migrate, RESOURCE_MIGRATIONS } from "../migrate";
import { byWords, forgetSession, indexEntries, type SearchScope, searchEntries, searchMeaning } from "./recall-index";
import { MeaningIndex, type MeaningState } from "./recall-meaning";

/** The memory object of resource `rid`. */
export function resourceMemory(env: Pick<Env, "RESOURCES">, rid: string) {
  return env.RESOURCES.get(env.RESOURCES.idFromName(rid));
}

/**
 * Registers a session with resource `rid` (none when null) before the session is created, so erasing the
 * resource finds every session that may exist; returns `rid` for the session's creation.
 */
export async function joinResource(env: Pick<Env, "RESOURCES">, rid: string | null, sessionId: string): Promise<string | null> {
  if (rid !== null) await resourceMemory(env, rid).addSession(sessionId);
  return rid;
}

/** A stored document; `json` is its text (a stub's types cannot carry arbitrary JSON values back). */
export type StoredDocument = {
  json: string;
  version: number;
  updated_at: number | null;
};

/** A write of a working memory document: the whole document (put) or a merge patch, checked before it is stored. */
export type DocumentWrite = {
  scope: string;
  kind: "put" | "patch";
  value: Record<string, unknown>;
  schema?: JsonSchema;
  /** The document before the first write (the agent's template). */
  template?: Record<string, unknown>;
};

export type WriteOutcome = { ok: true; stored: StoredDocument } | { ok: false; problems: DocumentProblem[] };

/** The versions kept of each document (the newest being the document itself): older ones are dropped as new ones come. */
export const WORKING_MEMORY_VERSIONS = 50;

export class ResourceMemoryObject extends DurableObject<Env> {
  /** Test hook (TEST_HOOKS=1 only): recall index writes that fail before they land. */
  private failingIndexWrites = 0;
  /** The in-memory index of the messages' vectors, built on the first search by meaning after the object starts. */
  protected readonly meaning: MeaningIndex;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.meaning = new MeaningIndex(ctx.storage.sql);
    void ctx.blockConcurrencyWhile(async () => {
      migrate(ctx.storage, RESOURCE_MIGRATIONS);
    });
  }

  /** The document of `scope` ("" the resource's, else an agent's); version 0 with `template` before any write. */
  async working(scope: string, template: Record<string, unknown> = {}): Promise<StoredDocument> {
    const row = this.ctx.storage.sql
      .exec<{ document: string; version: number; updated_at: number }>("SELECT document, version, updated_at FROM working_memory WHERE scope = ?", scope)
      .toArray()[0];
    return row ? { json: row.document, version: row.version, updated_at: row.updated_at } : { json: JSON.stringify(template), version: 0, updated_at: null };
  }

  /** Stores the next version, or nothing when the result is not a valid document (the problems say why). */
  async write(w: DocumentWrite): Promise<WriteOutcome> {
    const current = await this.working(w.scope, w.template);
    const before = JSON.parse(current.json) as Json;
    // A merge patch that is an object always gives an object.
    const document = (w.kind === "put" ? w.value : mergePatch(before, w.value as Json)) as Record<string, unknown>;
    const problems = documentProblems(before, document as Json, w.schema);
    if (problems.length > 0) return { ok: false, problems };
    const text = JSON.stringify(document);
    const stored: StoredDocument = { json: text, version: current.version + 1, updated_at: Date.now() };
    this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      sql.exec(
        "INSERT OR REPLACE INTO working_memory (scope, document, version, updated_at) VALUES (?, ?, ?, ?)",
        w.scope,
        text,
        stored.version,
        stored.updated_at,
      );
      sql.exec(
        "INSERT INTO working_versions (scope, version, patch, document, at) VALUES (?, ?, ?, ?, ?)",
        w.scope,
        stored.version,
        JSON.stringify(w.value),
        text,
        stored.updated_at,
      );
      sql.exec("DELETE FROM working_versions WHERE scope = ? AND version <= ?", w.scope, stored.version - WORKING_MEMORY_VERSIONS);
    });
    return { ok: true, stored };
  }

  /** A session opened for this resource (before it is created, so erasing the resource always finds it). */
  async addSession(sessionId: string): Promise<void> {
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO resource_sessions (session_id, created_at) VALUES (?, ?)", sessionId, Date.now());
  }

  async sessions(): Promise<string[]> {
    return this.ctx.storage.sql
      .exec<{ session_id: string }>("SELECT session_id FROM resource_sessions ORDER BY created_at")
      .toArray()
      .map((r) => r.session_id);
  }

  /** Indexes an ended turn's messages; those of a session the resource no longer has (erased meanwhile) are dropped. */
  async index(entries: RecallEntry[]): Promise<void> {
    if (this.failingIndexWrites > 0) {
      this.failingIndexWrites -= 1;
      throw new Error("recall index write failed (test hook)");
    }
    const sql = this.ctx.storage.sql;
    const known = (sid: string) => sql.exec("SELECT 1 FROM resource_sessions WHERE session_id = ?", sid).toArray().length > 0;
    const kept = entries.filter((e) => known(e.session_id));
    if (kept.length === 0) return;
    const { removed, added } = this.ctx.storage.transactionSync(() => indexEntries(sql, kept));
    this.meaning.written(removed, added);
  }

  /** `vector`: the query's embedding (the agent's memory.recall.embedding_model), for ranking by meaning too. */
  async search(query: string, limit: number, scope: SearchScope = {}, vector?: number[]): Promise<RecallHit[]> {
    return searchEntries(this.ctx.storage.sql, this.meaning, query, limit, scope, vector);
  }

  /** The ranking by words alone, `limit` deep (`searchEntries`'s parts, for a caller that fuses them itself). */
  async searchWords(query: string, limit: number, scope: SearchScope = {}): Promise<RecallHit[]> {
    return byWords(this.ctx.storage.sql, query, limit, scope);
  }

  /** The ranking by meaning alone, twice `limit` deep; null while the index is being built. */
  async searchMeaning(vector: number[], limit: number, scope: SearchScope = {}): Promise<RecallHit[] | null> {
    return searchMeaning(this.meaning, vector, limit, scope);
  }

  /** The index of meaning's size and whether it is complete (null: not built since the object started). */
  async meaningState(): Promise<MeaningState | null> {
    return this.meaning.state();
  }

  /** An erased session: its messages leave the recall index and it leaves the resource. */
  async forgetSession(sessionId: string): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      forgetSession(this.ctx.storage.sql, sessionId);
      this.ctx.storage.sql.exec("DELETE FROM resource_sessions WHERE session_id = ?", sessionId);
    });
    // After the commit, with no await between: no search can see the codes without the session's rows.
    this.meaning.forgetSession(sessionId);
  }

  /** Erases everything of the resource; returns the ids of the sessions it had (for the caller to erase). */
  async erase(): Promise<string[]> {
    const sessions = await this.sessions();
    this.meaning.reset();
    await this.ctx.storage.deleteAll();
    // The object stays usable: a later write for the same resource starts from an empty schema again.
    migrate(this.ctx.storage, RESOURCE_MIGRATIONS);
    return sessions;
  }

  /** Test hook: the next `n` recall index writes fail. Refused unless the deployment sets TEST_HOOKS=1. */
  async failIndexWrites(n: number): Promise<void> {
    if (this.env.TEST_HOOKS !== "1") throw new Error("test hooks are off");
    this.failingIndexWrites = n;
  }
}
