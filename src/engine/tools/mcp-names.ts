// How MCP tools are named and classed: `mcp:<server>/<tool>` references in an agent's config, the
// provider-safe names the model sees, their permission class and their approval rule.

import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { AgentConfig, HitlTool, McpServerSpec } from "../../protocol/agent-config";
import { hitlRules } from "../../protocol/agent-config";
import type { PermissionClass } from "../../protocol/tool-classes";
import type { ToolDefinition } from "./types";

export const MCP_PREFIX = "mcp:";
const MAX_NAME = 64;

/**
 * `mcp:<server>/<tool>` or `mcp:<server>/*` (every tool of the server), as written in an agent's `tools`
 * and `hitl_tools`; null for any other name.
 */
export function parseMcpRef(ref: string): { server: string; tool: string } | null {
  const m = /^mcp:([A-Za-z0-9_-]{1,64})\/(\S{1,128})$/.exec(ref);
  return m ? { server: m[1]!, tool: m[2]! } : null;
}

/** The name the model sees: `<server>__<tool>`, reduced to `^[A-Za-z0-9_-]{1,64}$` (a hash keeps long names apart). */
export function mcpToolName(server: string, tool: string): string {
  const name = `${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  if (name.length <= MAX_NAME) return name;
  return `${name.slice(0, MAX_NAME - 9)}_${fnv1a(`${server}/${tool}`)}`;
}

function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/**
 * A tool's permission class: its server's (default `network`), raised to `external_mutate` when the tool
 * declares `destructiveHint: true`, lowered to `safe` for `readOnlyHint: true` only when the server is trusted
 * (annotations are the server's claims).
 */
export function mcpPermissionClass(server: Pick<McpServerSpec, "permission_class" | "trusted">, annotations: McpTool["annotations"]): PermissionClass {
  if (annotations?.destructiveHint === true) return "external_mutate";
  if (annotations?.readOnlyHint === true && server.trusted) return "safe";
  return server.permission_class;
}

/** The hitl_tools entry naming this tool (with its options), or null. */
export function hitlRule(hitl: AgentConfig["hitl_tools"], tool: Pick<ToolDefinition, "name" | "mcp">): HitlTool | null {
  return hitlRules(hitl).find((rule) => namedInHitl([rule.name], tool)) ?? null;
}

/** Whether `hitl_tools` names this tool: by its exposed name, as `mcp:<server>/<tool>`, or as `mcp:<server>/*`. */
function namedInHitl(hitl: readonly string[], tool: Pick<ToolDefinition, "name" | "mcp">): boolean {
  if (hitl.includes(tool.name)) return true;
  return tool.mcp !== undefined && (hitl.includes(`${MCP_PREFIX}${tool.mcp.server}/${tool.mcp.tool}`) || hitl.includes(`${MCP_PREFIX}${tool.mcp.server}/*`));
}
