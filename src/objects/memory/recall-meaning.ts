// Recall by meaning inside the resource's object: its messages' sign codes in memory (src/engine/memory/sign-codes.ts),
// searched for the best CANDIDATES, which are re-ranked by cosine with their float vectors read from SQLite by rowid.
// The codes are built on the first query after the object starts (in chunks, between which other requests run),
// kept in step with every write and erasure, and bounded by INDEX_BUDGET_BYTES (beyond it the newest messages
// are kept: the older ones are found by words only). A query that comes while a large build runs is answered by
// words only rather than wait for it (see docs/guides/memory.md). From PARTITION_FROM rows, and again each time
// they have doubled, the codes' partition is chosen in the background, a slice at a time; queries meanwhile read
// the rows where they are.
import { rowBytes, SignCodes } from "../../engine/memory/sign-codes";
import type { RecallHit } from "../../protocol/memory";
import { snippetOf, towards } from "./recall-vectors";

/** The most memory the codes may take (at 1,536 dimensions about 129,000 messages, with room to grow; 100,000 take about 22 MB). */
export const INDEX_BUDGET_BYTES = 32 * 1024 * 1024;
/**
 * The rows re-ranked with their floats (each a read from SQLite, the search's largest cost): enough for recall@10
 * of 0.95 and more on 100,000 messages (bench/memory.mjs).
 */
export const CANDIDATES = 300;
/** Rows read from SQLite in one slice of a build; an index of at most this many is built inline by the query. */
export const BUILD_CHUNK = 1_000;

/** A scope as the entries' SQL condition, and as the sessions it admits. */
export type MeaningScope = { where: string; values: string[]; except?: string; within?: readonly string[] };

/** A row as its write changed it, for the index to follow. */
export type WrittenRow = { rowid: number; session_id: string; vector?: readonly number[] };

/** `ready`: built, and no partition being chosen; `partitions`: the partitions a query reads (0: it reads every row). */
export type MeaningState = { dims: number; rows: number; bytes: number; ready: boolean; partitions: number };

export class MeaningIndex {
  private codes: SignCodes | null = null;
  /** The build under way: rows with a rowid up to `cursor` are in; null when none runs. */
  private building: { cursor: number } | null = null;
  /** Bumped by each new build and each reset, so a superseded background build stops. */
  private generation = 0;
  /** Whether a background task is building the codes or choosing their partition. */
  private working = false;

  constructor(private readonly sql: SqlStorage) {}

  state(): MeaningState | null {
    const c = this.codes;
    return c && { dims: c.dims, rows: c.count, bytes: c.bytes, ready: this.building === null && !this.working, partitions: c.partitions };
  }

  /** A write landed: the rows it replaced leave, the ones it added enter (a building index reads those itself). */
  written(removed: readonly number[], added: readonly WrittenRow[]): void {
    const codes = this.codes;
    if (!codes) return;
    for (const rowid of removed) codes.remove(rowid);
    for (const row of added) {
      if (row.vector?.length !== codes.dims) continue;
      if (this.building && row.rowid > this.building.cursor) continue;
      codes.add(row.rowid, row.session_id, row.vector);
    }
    if (codes.wantsPartition) this.startWork();
  }

  forgetSession(sessionId: string): void {
    this.codes?.removeSession(sessionId);
  }

  /** Everything of the resource was erased. */
  reset(): void {
    this.generation += 1;
    this.codes = null;
    this.building = null;
    this.working = false;
  }

  /**
   * The `limit` messages nearest to `vector` in `scope`, best first; null while the index is being built (the
   * caller ranks by words only). Messages whose vectors have another length (another model's) are not searched.
   * `candidates`: how many to re-rank (the bench varies it).
   */
  nearest(vector: readonly number[], limit: number, scope: MeaningScope, candidates = CANDIDATES): RecallHit[] | null {
    if (!this.ready(vector.length)) return null;
    const ids = this.codes!.candidates(vector, Math.max(candidates, limit), scope);
    if (ids.length === 0) return [];
    const q = new Float32Array(vector);
    // The scope again in SQL: what the codes hold and what is stored can only agree, but the store decides.
    const scored = this.sql
      .exec<{ rowid: number; vector: ArrayBuffer }>(
        `SELECT rowid, vector FROM recall_entries WHERE rowid IN (SELECT value FROM json_each(?)) AND ${scope.where}`,
        JSON.stringify(ids),
        ...scope.values,
      )
      .toArray()
      .map((r) => ({ rowid: r.rowid, similarity: towards(q, new Float32Array(r.vector)) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, limit);
    const rows = new Map(
      this.sql
        .exec<Omit<RecallHit, "snippet" | "score"> & { rowid: number; text: string }>(
          "SELECT rowid, session_id, turn_id, role, at, text FROM recall_entries WHERE rowid IN (SELECT value FROM json_each(?))",
          JSON.stringify(scored.map((s) => s.rowid)),
        )
        .toArray()
        .map((r) => [r.rowid, r]),
    );
    return scored.flatMap(({ rowid }) => {
      const row = rows.get(rowid);
      if (!row) return [];
      const { rowid: _, text, ...hit } = row;
      return [{ ...hit, snippet: snippetOf(text), score: 0 }];
    });
  }

  /** Whether the codes of `dims`-long vectors are complete; starts their build when none is under way. */
  private ready(dims: number): boolean {
    if (this.codes?.dims === dims) return this.building === null;
    this.generation += 1;
    this.working = false;
    const maxRows = Math.floor(INDEX_BUDGET_BYTES / rowBytes(dims));
    const total = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM recall_entries WHERE vector IS NOT NULL AND length(vector) = ?", dims * 4).one().n;
    // Over the budget, the newest maxRows: the build starts after the rowid of the one before them.
    const start =
      total > maxRows
        ? this.sql
            .exec<{ rowid: number }>(
              "SELECT rowid FROM recall_entries WHERE vector IS NOT NULL AND length(vector) = ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
              dims * 4,
              maxRows,
            )
            .one().rowid
        : 0;
    this.codes = new SignCodes(dims, Math.ceil(Math.min(total, maxRows) * 1.05) + 64, maxRows);
    this.building = { cursor: start };
    if (total <= BUILD_CHUNK) {
      while (!this.step());
      return true;
    }
    this.startWork();
    return false;
  }

  /** Builds the codes, then chooses their partition when they want one, in the background (one task at a time). */
  private startWork(): void {
    if (this.working) return;
    this.working = true;
    const generation = this.generation;
    void (async () => {
      try {
        // A build's slice, or (once built) a slice of choosing the partition; false when nothing is left.
        const more = () => {
          if (!this.building) return !this.codes!.partitionStep();
          this.step();
          return true;
        };
        while (generation === this.generation && more()) {
          // A slice at a time, so writes, erasures and the queries of other turns run between them.
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
      } catch (err) {
        console.error("recall by meaning: building the index failed; the next query starts again", err);
        if (generation === this.generation) this.reset();
      } finally {
        if (generation === this.generation) this.working = false;
      }
    })();
  }

  /** Reads the next slice into the codes; true when the build is complete. */
  private step(): boolean {
    const codes = this.codes!;
    const building = this.building!;
    const rows = this.sql
      .exec<{ rowid: number; session_id: string; vector: ArrayBuffer }>(
        "SELECT rowid, session_id, vector FROM recall_entries WHERE rowid > ? AND vector IS NOT NULL AND length(vector) = ? ORDER BY rowid LIMIT ?",
        building.cursor,
        codes.dims * 4,
        BUILD_CHUNK,
      )
      .toArray();
    for (const r of rows) codes.add(r.rowid, r.session_id, new Float32Array(r.vector));
    if (rows.length > 0) building.cursor = rows.at(-1)!.rowid;
    if (rows.length < BUILD_CHUNK) this.building = null;
    return this.building === null;
  }
}
