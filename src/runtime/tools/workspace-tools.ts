// workspace_read / workspace_write / workspace_list: a per-session file tree (stored in R2 by the session
// object), confined to the policy's workspace root.

import { safeRelativePath } from "../../protocol/workspace-path";
import { type ToolDefinition, ToolError } from "./types";

const MAX_FILE_BYTES = 1_000_000;
const LIST_LIMIT = 1000;

function pathArg(args: Record<string, unknown>, allowEmpty = false): string {
  const raw = typeof args.path === "string" ? args.path : allowEmpty ? "" : null;
  const path = raw === null ? null : safeRelativePath(raw, allowEmpty);
  if (path === null) {
    throw new ToolError(
      `Refused path ${JSON.stringify(args.path)}: use a relative path of plain segments inside the workspace (no "/" at the start, no "." or "..")`,
    );
  }
  return path;
}

export const workspaceTools: ToolDefinition[] = [
  {
    name: "workspace_read",
    description: "Reads a text file from this session's workspace.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: 'Relative path, such as "notes/plan.md"' } },
      required: ["path"],
      additionalProperties: false,
    },
    permission_class: "knowledge",
    parallel_safe: true,
    idempotent: true,
    async execute(args, ctx) {
      const path = pathArg(args);
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
      const content = String(args.content);
      if (new TextEncoder().encode(content).byteLength > MAX_FILE_BYTES) throw new ToolError(`Content is larger than ${MAX_FILE_BYTES} bytes`);
      return { path, bytes: await ctx.workspace.write(path, content) };
    },
  },
  {
    name: "workspace_list",
    description: "Lists files in this session's workspace, optionally under a directory.",
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
      return { files: await ctx.workspace.list(dir ? `${dir}/` : "", LIST_LIMIT) };
    },
  },
];
