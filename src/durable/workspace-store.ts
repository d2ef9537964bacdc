// The workspace tools' file tree, in R2 under the session's prefix and the policy's workspace root. Paths
// arrive already checked (src/runtime/tools/workspace-path.ts); this only maps them to object keys.
import type { WorkspaceStore } from "../runtime/tools/types";

export function r2Workspace(bucket: R2Bucket, sessionId: string, root: string): WorkspaceStore {
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
  };
}
