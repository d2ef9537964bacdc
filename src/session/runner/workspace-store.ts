// The workspace tools' file tree, in R2 under the session's prefix and the policy's workspace root. Paths
// arrive already checked (src/protocol/workspace-path.ts); this only maps them to object keys. The
// session's files (file-store.ts) are reachable too, read-only.
import type { WorkspaceStore } from "../../engine/tools/types";
import { findFile, type SessionFiles } from "../files/file-store";

export function r2Workspace(bucket: R2Bucket, sessionId: string, root: string, files: SessionFiles): WorkspaceStore {
  const base = `sessions/${sessionId}/workspace${root === "/" ? "" : root}/`;
  return {
    async read(path) {
      const object = await bucket.get(base + path);
      return object ? object.text() : null;
    },
    async write(path, content) {
      const object = await bucket.put(base + path, content, { httpMetadata: { contentType: "text/plain; charset=utf-8" } });
      return object.size;
    },
    async list(prefix, limit) {
      const listed = await bucket.list({ prefix: base + prefix, limit });
      return listed.objects.map((o) => ({ path: o.key.slice(base.length), bytes: o.size }));
    },
    async files() {
      return (await files.all()).map(({ file_id, media_type, filename, size }) => ({ file_id, media_type, filename, size }));
    },
    async fileBytes(fileId) {
      const file = await findFile(files, fileId);
      const object = file && (await bucket.get(file.key));
      return object ? new Uint8Array(await object.arrayBuffer()) : null;
    },
  };
}
