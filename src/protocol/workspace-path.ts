// Workspace paths: relative, plain segments only. Anything that could name a place outside the session's
// workspace root (absolute paths, "..", ".", backslashes, percent-escapes, control characters, and Unicode
// look-alikes of a dot or slash, as outbound URLs refuse them: lookalikes.ts) is refused.
import { dotOrSlashLookalike, lookalikeReason } from "./lookalikes";

const SEGMENT = /^[A-Za-z0-9 _.,+=@()-]{1,128}$/;
const MAX_SEGMENTS = 32;
/** R2 keys are at most 1024 bytes; this leaves room for the session prefix and the workspace root. */
const MAX_PATH_CHARS = 512;

/** The safe relative path, or null when it is not one. An empty path (the root itself) is allowed for listing. */
export function safeRelativePath(path: string, allowEmpty = false): string | null {
  if (path === "" || path === ".") return allowEmpty ? "" : null;
  if (path.startsWith("/") || path.length > MAX_PATH_CHARS || dotOrSlashLookalike(path) !== null) return null;
  const segments = path.replace(/\/+$/, "").split("/");
  if (segments.length > MAX_SEGMENTS) return null;
  for (const s of segments) {
    if (s === "." || s === ".." || !SEGMENT.test(s)) return null;
  }
  return segments.join("/");
}

/** Why a path safeRelativePath refused is refused: its look-alike when it holds one, else `otherwise`. */
export function refusedPathReason(path: string, otherwise: string): string {
  const found = dotOrSlashLookalike(path);
  return found ? lookalikeReason(found, "") : otherwise;
}

/** A policy's workspace_root: absolute, normalized to "/" or "/a/b". */
export function normalizeWorkspaceRoot(root: string): string | null {
  if (!root.startsWith("/")) return null;
  const rel = safeRelativePath(root.slice(1), true);
  return rel === null ? null : `/${rel}`;
}
