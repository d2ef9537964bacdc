// A session's files (uploads, attachments of turns and chats, files tools return) in R2 under the session's
// prefix, so erasing the session (session-erase.ts) removes them with everything else. Each object carries
// its own description (media type, name, digest) so no other store has to be kept in step with R2.
import type { FileInfo } from "../protocol/operations/files";
import { checkFile, checkSessionTotal, type FileLimits } from "../runtime/file-rules";
import { randomId } from "../runtime/ids";

const FILE_ID = /^file_[0-9a-f]{24}$/;
const PAGE = 1000;

const prefixOf = (sessionId: string) => `sessions/${sessionId}/files/`;
const keyOf = (sessionId: string, fileId: string) => `${prefixOf(sessionId)}${fileId}`;

export const isFileId = (id: string): boolean => FILE_ID.test(id);

function infoOf(object: R2Object): FileInfo {
  const meta = object.customMetadata ?? {};
  return {
    file_id: object.key.slice(object.key.lastIndexOf("/") + 1),
    media_type: object.httpMetadata?.contentType ?? "application/octet-stream",
    size: object.size,
    sha256: meta.sha256 ?? "",
    filename: meta.filename || null,
    created_at: object.uploaded.toISOString(),
  };
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface FileStore {
  put(bytes: Uint8Array, mediaType: string, filename: string | null): Promise<FileInfo>;
  list(): Promise<FileInfo[]>;
  head(fileId: string): Promise<FileInfo | null>;
  /** The file's bytes, or a range of them. */
  get(fileId: string, range?: { offset: number; length: number }): Promise<R2ObjectBody | null>;
  delete(fileId: string): Promise<boolean>;
}

export function fileStore(bucket: R2Bucket, sessionId: string): FileStore {
  return {
    async put(bytes, mediaType, filename) {
      const file_id = randomId("file");
      const sha256 = await sha256Hex(bytes);
      const object = await bucket.put(keyOf(sessionId, file_id), bytes, {
        httpMetadata: { contentType: mediaType },
        customMetadata: { sha256, filename: filename ?? "" },
      });
      return infoOf(object);
    },
    async list() {
      const files: FileInfo[] = [];
      let cursor: string | undefined;
      do {
        // `include` (the objects' metadata in the listing) is newer than these workers types.
        const options: R2ListOptions & { include: string[] } = {
          prefix: prefixOf(sessionId),
          limit: PAGE,
          cursor,
          include: ["httpMetadata", "customMetadata"],
        };
        const page = await bucket.list(options);
        files.push(...page.objects.map(infoOf));
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
      return files.sort((a, b) => (a.created_at === b.created_at ? (a.file_id < b.file_id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
    },
    async head(fileId) {
      if (!isFileId(fileId)) return null;
      const object = await bucket.head(keyOf(sessionId, fileId));
      return object ? infoOf(object) : null;
    },
    async get(fileId, range) {
      if (!isFileId(fileId)) return null;
      return bucket.get(keyOf(sessionId, fileId), range ? { range } : undefined);
    },
    async delete(fileId) {
      if (!(await this.head(fileId))) return false;
      await bucket.delete(keyOf(sessionId, fileId));
      return true;
    },
  };
}

/**
 * Stores a file after every check (its type, size, name and bytes, and the session's total with it): the one
 * way bytes become a session file, for uploads, attachments and files tools return. `path` names the field.
 */
export async function addFile(
  files: FileStore,
  file: { bytes: Uint8Array; media_type: string; filename: string | null },
  limits: FileLimits,
  path = "body",
): Promise<FileInfo> {
  checkFile(file.bytes, file.media_type, file.filename, limits, path);
  const stored = (await files.list()).reduce((sum, f) => sum + f.size, 0);
  checkSessionTotal(stored, file.bytes.byteLength, limits);
  return files.put(file.bytes, file.media_type, file.filename);
}

/**
 * Copies every file of session `from` to session `to` under the same ids (a fork or a replay: the
 * conversation it carries names them). Returns how many.
 */
export async function copyFiles(bucket: R2Bucket, from: string, to: string): Promise<number> {
  const source = fileStore(bucket, from);
  const files = await source.list();
  for (const f of files) {
    const object = await source.get(f.file_id);
    if (!object) continue; // deleted meanwhile
    await bucket.put(keyOf(to, f.file_id), await object.arrayBuffer(), { httpMetadata: object.httpMetadata, customMetadata: object.customMetadata });
  }
  return files.length;
}
