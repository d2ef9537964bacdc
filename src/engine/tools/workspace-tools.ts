// workspace_read / workspace_write / workspace_list: a per-session file tree (stored in R2 by the session
// object), confined to the policy's workspace root. The session's files appear read-only under `files/`
// (session-files.ts).

import { refusedPathReason, safeRelativePath } from "../../protocol/workspace-path";
import { FILES_DIR, isUnderFiles, listedSessionFiles, readSessionFile, sessionFileName } from "./session-files";
import { type ToolDefinition, ToolError } from "./types";

const MAX_FILE_BYTES = 1_000_000;
const LIST_LIMIT = 1000;

function pathArg(args: Record<string, unknown>, allowEmpty = false): string {
  const raw = typeof args.path === "string" ? args.path : allowEmpty ? "" : null;
  const path = raw === null ? null : safeRelativePath(raw, allowEmpty);
  if (path === null) {
    const plain = 'use a relative path of plain segments inside the workspace (no "/" at the start, no "." or "..")';
    throw new ToolError(`Refused path ${JSON.stringify(args.path)}: ${typeof raw === "string" ? refusedPathReason(raw, plain) : plain}`);
  }
  return path;
}

export const workspaceTools: ToolDefinition[] = [
  {
    name: "workspace_read",
    description:
      "Reads a text file from this session's workspace, or a file of the session under files/ (text as text; an image or PDF is given to you as a file).",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: 'Relative path, such as "notes/plan.md" or "files/<file_id or filename>"' } },
      required: ["path"],
      additionalProperties: false,
    },
    permission_class: "knowledge",
    parallel_safe: true,
    idempotent: true,
    async execute(args, ctx) {
      const path = pathArg(args);
      const fileName = sessionFileName(path);
      if (fileName !== null) return readSessionFile(ctx.workspace, fileName, MAX_FILE_BYTES);
      const content = await ctx.workspace.read(path);
      if (content === null) throw new ToolError(`No file at "${path}"`);
      return content;
    },
  },
  {
    name: "workspace_write",
    description: "Writes (creates or replaces) a text file in this session's workspace.",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
      additionalProperties: false,
    },
    permission_class: "workspace_write",
    parallel_safe: true,
    idempotent: true,
    lock: "workspace",
    async execute(args, ctx) {
      const path = pathArg(args);
      if (isUnderFiles(path)) throw new ToolError(`Refused path "${path}": ${FILES_DIR}/ holds the session's files, which are read-only`);
      const content = String(args.content);
      if (new TextEncoder().encode(content).byteLength > MAX_FILE_BYTES) throw new ToolError(`Content is larger than ${MAX_FILE_BYTES} bytes`);
      return { path, bytes: await ctx.workspace.write(path, content) };
    },
  },
  {
    name: "workspace_list",
    description: "Lists files in this session's workspace, optionally under a directory; the session's files are under files/.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "Directory to list; default the workspace root" } },
      additionalProperties: false,
    },
    permission_class: "knowledge",
    parallel_safe: true,
    idempotent: true,
    async execute(args, ctx) {
      const dir = pathArg(args, true);
      if (dir === FILES_DIR) return { files: await listedSessionFiles(ctx.workspace, LIST_LIMIT) };
      const own = await ctx.workspace.list(dir ? `${dir}/` : "", LIST_LIMIT);
      return { files: dir ? own : [...own, ...(await listedSessionFiles(ctx.workspace, LIST_LIMIT - own.length))] };
    },
  },
];
