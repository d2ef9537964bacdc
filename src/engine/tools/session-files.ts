// The session's files (docs/guides/files.md) as the workspace tools see them: read-only, under `files/`, each
// at `files/<file_id>` and readable by its filename too. Text-like files read as text; images and PDFs read as
// a reference that the next model call receives as the file itself (file-parts.ts).

import type { FileRef } from "../../protocol/input-parts";
import { attachedFile, isTextLike } from "../file-parts";
import { ToolError, type WorkspaceStore } from "./types";

export const FILES_DIR = "files";

/** The name after `files/` when the path names a session file, else null (a path of the workspace's own). */
export function sessionFileName(path: string): string | null {
  const [dir, name, ...rest] = path.split("/");
  return dir === FILES_DIR && name !== undefined && rest.length === 0 ? name : null;
}

export const isUnderFiles = (path: string): boolean => path === FILES_DIR || path.startsWith(`${FILES_DIR}/`);

/** The session's files as listing entries. */
export async function listedSessionFiles(workspace: WorkspaceStore, limit: number) {
  const files = await workspace.files();
  return files.slice(0, limit).map((f) => ({ path: `${FILES_DIR}/${f.file_id}`, bytes: f.size, media_type: f.media_type, filename: f.filename }));
}

async function find(workspace: WorkspaceStore, name: string): Promise<FileRef> {
  const files = await workspace.files();
  const byId = files.find((f) => f.file_id === name);
  if (byId) return byId;
  const named = files.filter((f) => f.filename === name);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) {
    throw new ToolError(`Several session files are named "${name}": read one as ${named.map((f) => `"${FILES_DIR}/${f.file_id}"`).join(" or ")}`);
  }
  throw new ToolError(`No session file "${FILES_DIR}/${name}" (workspace_list with path "${FILES_DIR}" lists them)`);
}

/** A session file's content for the model: its text, or a reference to the file the next model call receives. */
export async function readSessionFile(workspace: WorkspaceStore, name: string, maxTextBytes: number): Promise<unknown> {
  const file = await find(workspace, name);
  if (!isTextLike(file.media_type)) return { path: `${FILES_DIR}/${file.file_id}`, ...attachedFile(file) };
  if (file.size > maxTextBytes) throw new ToolError(`"${FILES_DIR}/${name}" is larger than ${maxTextBytes} bytes, too large to read as text`);
  const bytes = await workspace.fileBytes(file.file_id);
  if (!bytes) throw new ToolError(`No session file "${FILES_DIR}/${name}" (it was deleted)`);
  return new TextDecoder().decode(bytes);
}
