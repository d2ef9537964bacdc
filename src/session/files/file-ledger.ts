// The one writer of a session's files, in its session object: a row per file in the session's SQLite (its R2 key
// and description). A file's bytes are reserved (a row with stored = 0, counted at once) before they go to R2,
// in one synchronous check-and-insert, so concurrent writers cannot pass the session's limits together; a
// failed store releases them. The session's byte and file counts are a query, never an R2 listing; a session
// from before the table has its files read from R2 once. A fork's rows name its source's objects until its own
// copies are made, off the fork's request, by the alarm (COPY_DUE).

import { randomId } from "../../ids";
import { ApiError } from "../../protocol/errors";
import type { FileInfo } from "../../protocol/operations/files";
import { checkSessionQuota, type FileLimits } from "./file-rules";
import { fileKey, filePrefix, listR2Files } from "./file-store";

/** The alarm entry of a fork's copying of its source's files. */
export const COPY_DUE = "files.copy";
const COPY_BATCH = 50;
/** A reservation whose writer never came back (its request died) stops counting after this. */
const STALE_MS = 15 * 60_000;

export type FileRow = {
  file_id: string;
  r2_key: string;
  media_type: string;
  size: number;
  sha256: string;
  filename: string | null;
  created_at: number;
};

/** What a writer reserves: the file's description (its bytes go to R2 after). */
export type Reservation = Omit<FileRow, "file_id" | "r2_key" | "created_at">;
/** A stored file and where its bytes are. */
export type StoredFile = FileInfo & { key: string };
export interface FilePage {
  files: FileInfo[];
  /** The last file of the page, where the next starts; null on the last page. */
  next: [number, string] | null;
}
/** The ledger's operations, as the routes reach them over RPC (`SessionObject.files`). */
export type FileOp = "reserve" | "stored" | "release" | "page" | "head" | "remove" | "all";

const infoOf = (r: FileRow): FileInfo => ({
  file_id: r.file_id,
  media_type: r.media_type,
  size: r.size,
  sha256: r.sha256,
  filename: r.filename,
  created_at: new Date(r.created_at).toISOString(),
});

const COLUMNS = "file_id, r2_key, media_type, size, sha256, filename, created_at";

export class FileLedger {
  private backfill: Promise<void> | null = null;

  constructor(
    private readonly sql: SqlStorage,
    private readonly bucket: R2Bucket,
    private readonly sessionId: string,
    private readonly limits: FileLimits,
    private readonly hooks: {
      /** Sets the alarm entry of a fork's copying. */
      copy(): void;
      /** The stored files changed (the session's index row counts their bytes). */
      changed(): void;
    },
  ) {}

  /** A new session: nothing to read from R2; a fork's rows name its source's objects until copied. */
  created(rows: FileRow[]): void {
    this.sql.exec("DELETE FROM files_backfill");
    for (const r of rows) this.insert(r, 1);
    if (rows.length > 0) this.hooks.copy();
  }

  async reserve(file: Reservation): Promise<{ file_id: string; key: string }> {
    await this.ready();
    const now = Date.now();
    this.sql.exec("DELETE FROM files WHERE stored = 0 AND created_at < ?", now - STALE_MS);
    checkSessionQuota(this.totals(), file.size, this.limits);
    const file_id = randomId("file");
    const key = fileKey(this.sessionId, file_id);
    this.insert({ ...file, file_id, r2_key: key, created_at: now }, 0);
    return { file_id, key };
  }

  async stored(fileId: string): Promise<FileInfo> {
    this.sql.exec("UPDATE files SET stored = 1 WHERE file_id = ?", fileId);
    const row = this.row(fileId, true);
    if (!row) throw new ApiError("internal_error", `The reservation of file ${fileId} was lost`);
    this.hooks.changed();
    return infoOf(row);
  }

  async release(fileId: string): Promise<void> {
    this.sql.exec("DELETE FROM files WHERE file_id = ? AND stored = 0", fileId);
  }

  /** The stored files after `after` (oldest first), `limit` of them. */
  async page({ after, limit }: { after: [number, string] | null; limit: number }): Promise<FilePage> {
    await this.ready();
    const [at, id] = after ?? [-1, ""];
    const rows = this.sql
      .exec<FileRow>(
        `SELECT ${COLUMNS} FROM files WHERE stored = 1 AND (created_at > ? OR (created_at = ? AND file_id > ?)) ORDER BY created_at, file_id LIMIT ?`,
        at,
        at,
        id,
        limit + 1,
      )
      .toArray();
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { files: page.map(infoOf), next: rows.length > limit && last ? [last.created_at, last.file_id] : null };
  }

  async head(fileId: string): Promise<StoredFile | null> {
    await this.ready();
    const row = this.row(fileId, true);
    return row ? { ...infoOf(row), key: row.r2_key } : null;
  }

  /** Forgets a stored file; the R2 object to delete is its key when the session owns it (a fork's uncopied file is its source's). */
  async remove(fileId: string): Promise<{ key: string | null } | null> {
    const file = await this.head(fileId);
    if (!file) return null;
    this.sql.exec("DELETE FROM files WHERE file_id = ?", fileId);
    this.hooks.changed();
    return { key: this.owns(file.key) ? file.key : null };
  }

  /** Every stored file (for a fork's source, the workspace tools and the index's byte count). */
  async all(): Promise<FileRow[]> {
    await this.ready();
    return this.sql.exec<FileRow>(`SELECT ${COLUMNS} FROM files WHERE stored = 1 ORDER BY created_at, file_id`).toArray();
  }

  /** The bytes and number of the session's files, reservations included. */
  totals(): { bytes: number; count: number } {
    return this.sql.exec<{ bytes: number; count: number }>("SELECT coalesce(sum(size), 0) AS bytes, count(*) AS count FROM files").one();
  }

  async storedBytes(): Promise<number> {
    await this.ready();
    return this.sql.exec<{ bytes: number }>("SELECT coalesce(sum(size), 0) AS bytes FROM files WHERE stored = 1").one().bytes;
  }

  /** Copies a batch of a fork's files still named by their source's keys; true when more remain. */
  async copyBatch(): Promise<boolean> {
    const borrowed = this.sql
      .exec<FileRow>(
        `SELECT ${COLUMNS} FROM files WHERE stored = 1 AND substr(r2_key, 1, ?) != ? LIMIT ?`,
        filePrefix(this.sessionId).length,
        filePrefix(this.sessionId),
        COPY_BATCH,
      )
      .toArray();
    for (const r of borrowed) {
      const source = await this.bucket.get(r.r2_key);
      if (!source) {
        // The source deleted it (or was erased) before it was copied: the fork has it no more.
        this.sql.exec("DELETE FROM files WHERE file_id = ? AND r2_key = ?", r.file_id, r.r2_key);
        continue;
      }
      const key = fileKey(this.sessionId, r.file_id);
      await this.bucket.put(key, source.body, { httpMetadata: source.httpMetadata, customMetadata: source.customMetadata });
      const moved = this.sql.exec("UPDATE files SET r2_key = ? WHERE file_id = ? AND r2_key = ?", key, r.file_id, r.r2_key).rowsWritten;
      if (moved === 0) await this.bucket.delete(key); // deleted while it was copied
    }
    return borrowed.length === COPY_BATCH;
  }

  private owns(key: string): boolean {
    return key.startsWith(filePrefix(this.sessionId));
  }

  private row(fileId: string, stored: boolean): FileRow | null {
    return this.sql.exec<FileRow>(`SELECT ${COLUMNS} FROM files WHERE file_id = ? AND stored = ?`, fileId, stored ? 1 : 0).toArray()[0] ?? null;
  }

  private insert(r: FileRow, stored: 0 | 1): void {
    this.sql.exec(
      `INSERT INTO files (${COLUMNS}, stored) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      r.file_id,
      r.r2_key,
      r.media_type,
      r.size,
      r.sha256,
      r.filename,
      r.created_at,
      stored,
    );
  }

  /** Reads the files of a session from before the table from R2, once. */
  private ready(): Promise<void> {
    if (this.sql.exec("SELECT 1 FROM files_backfill").toArray().length === 0) return Promise.resolve();
    this.backfill ??= (async () => {
      const found = await listR2Files(this.bucket, this.sessionId);
      // No writer stores meanwhile: each reserves first, and a reservation waits for this.
      for (const r of found) this.insert(r, 1);
      this.sql.exec("DELETE FROM files_backfill");
    })().finally(() => {
      this.backfill = null;
    });
    return this.backfill;
  }
}
