// A session's files (uploads, attachments of turns and chats, files tools return): their bytes in R2 under the
// session's prefix, so erasing the session (session-erase.ts) removes them with everything else; their rows in
// the session's ledger (file-ledger.ts), the one writer of them. `storeFile` is the one way bytes become a
// session file, whoever writes them: reserved in the ledger, then put in R2, then marked stored (or released).
import type { FileInfo } from "../../protocol/operations/files";
import type { FileLedger, FileOp, FileRow, StoredFile } from "./file-ledger";
import { checkFile, type FileLimits } from "./file-rules";

const FILE_ID = /^file_[0-9a-f]{24}$/;
const PAGE = 1000;

export const filePrefix = (sessionId: string) => `sessions/${sessionId}/files/`;
export const fileKey = (sessionId: string, fileId: string) => `${filePrefix(sessionId)}${fileId}`;

export const isFileId = (id: string): boolean => FILE_ID.test(id);

/** The ledger's operations, in the session object or reached over RPC from a route. */
export type SessionFiles = Pick<FileLedger, FileOp>;

/** A file of the session, found by its id (null when it is not one), with where its bytes are. */
export async function findFile(files: SessionFiles, fileId: string): Promise<StoredFile | null> {
  return isFileId(fileId) ? files.head(fileId) : null;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Stores a file after every check (its type, size, name and bytes, and the session's limits with it, reserved
 * before the bytes go to R2): for uploads, attachments and files tools return. `path` names the field.
 */
export async function storeFile(
  files: SessionFiles,
  bucket: R2Bucket,
  file: { bytes: Uint8Array; media_type: string; filename: string | null },
  limits: FileLimits,
  path = "body",
): Promise<FileInfo> {
  checkFile(file.bytes, file.media_type, file.filename, limits, path);
  const sha256 = await sha256Hex(file.bytes);
  const { file_id, key } = await files.reserve({ size: file.bytes.byteLength, media_type: file.media_type, sha256, filename: file.filename });
  try {
    await bucket.put(key, file.bytes, { httpMetadata: { contentType: file.media_type }, customMetadata: { sha256, filename: file.filename ?? "" } });
  } catch (err) {
    await files.release(file_id);
    throw err;
  }
  return files.stored(file_id);
}

/** A session's files as the R2 objects describe them (each carries its type, name and digest): read once, into the ledger. */
export async function listR2Files(bucket: R2Bucket, sessionId: string): Promise<FileRow[]> {
  const files: FileRow[] = [];
  let cursor: string | undefined;
  do {
    // `include` (the objects' metadata in the listing) is newer than these workers types.
    const options: R2ListOptions & { include: string[] } = {
      prefix: filePrefix(sessionId),
      limit: PAGE,
      cursor,
      include: ["httpMetadata", "customMetadata"],
    };
    const page = await bucket.list(options);
    for (const o of page.objects) {
      files.push({
        file_id: o.key.slice(o.key.lastIndexOf("/") + 1),
        r2_key: o.key,
        media_type: o.httpMetadata?.contentType ?? "application/octet-stream",
        size: o.size,
        sha256: o.customMetadata?.sha256 ?? "",
        filename: o.customMetadata?.filename || null,
        created_at: o.uploaded.getTime(),
      });
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return files;
}
