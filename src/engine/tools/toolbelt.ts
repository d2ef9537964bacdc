// The tools an agent exposes in a turn: its built-ins and in-process tools, its HTTP tools, its remote A2A agents,
// its handoff tools and the MCP tools discovered for the turn, by name, narrowed to the permission classes the
// session's policy enables.
import type { AgentConfig } from "../../protocol/agent-config";
import type { Policy } from "../../protocol/policy";
import { PERMISSION_CLASSES } from "../../protocol/tool-classes";
import { a2aTool } from "./a2a-tool";
import { BUILTIN_TOOLS } from "./builtins";
import { handoffTool, handoffToolName } from "./handoff";
import { httpTool } from "./http-tool";
import { type InProcessTools, NO_IN_PROCESS_TOOLS } from "./in-process";
import { SPAWN_SUBAGENTS, spawnSubagents } from "./subagent-tools";
import type { ToolDefinition } from "./types";

/** A policy that hides nothing: the agent's own tool set, as checked when the agent is saved. */
export const ALL_CLASSES_POLICY: Pick<Policy, "classes"> = { classes: [...PERMISSION_CLASSES] };

/**
 * The exposed toolbelt: the agent's tools whose permission class the session's policy enables. `mcpTools`
 * are the tools discovered on the agent's MCP servers for this turn; they never replace a tool of the same name.
 * `inProcess`: the deployment's TypeScript tools (createRuntime), exposed when the agent names them in `tools`.
 */
export function resolveToolbelt(
  config: AgentConfig,
  policy: Pick<Policy, "classes">,
  mcpTools: readonly ToolDefinition[] = [],
  inProcess: InProcessTools = NO_IN_PROCESS_TOOLS,
): Map<string, ToolDefinition> {
  const all = agentTools(config, inProcess);
  for (const t of mcpTools) if (!all.has(t.name)) all.set(t.name, t);
  return new Map([...all].filter(([, t]) => policy.classes.includes(t.permission_class)));
}

function agentTools(config: AgentConfig, inProcess: InProcessTools): Map<string, ToolDefinition> {
  const belt = new Map<string, ToolDefinition>();
  for (const name of config.tools) {
    const tool = BUILTIN_TOOLS.get(name) ?? inProcess.get(name);
    if (tool) belt.set(name, tool);
  }
  // Declaring an HTTP tool on the agent is enough to expose it; listing it in `tools` too is allowed.
  for (const spec of config.http_tools) belt.set(spec.name, httpTool(spec));
  for (const spec of config.a2a_agents ?? []) belt.set(spec.name, a2aTool(spec));
  for (const agent of config.handoffs) belt.set(handoffToolName(agent), handoffTool(agent));
  // spawn_subagents exists exactly when the agent allows parallel sub-agents.
  if (config.allow_parallel_subagents) belt.set(SPAWN_SUBAGENTS, spawnSubagents(config.max_parallel_subagents));
  return belt;
}

/** Names in the agent's `tools` that no built-in, in-process tool, HTTP tool or MCP reference answers: they name code tools. */
export function codeToolNames(config: Pick<AgentConfig, "tools" | "http_tools">, inProcess: InProcessTools): string[] {
  const http = new Set(config.http_tools.map((t) => t.name));
  return config.tools.filter((n) => !BUILTIN_TOOLS.has(n) && !inProcess.has(n) && !http.has(n) && n !== SPAWN_SUBAGENTS && !n.startsWith("mcp:"));
}

export function describeTool(t: ToolDefinition) {
  return {
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    permission_class: t.permission_class,
    parallel_safe: t.parallel_safe,
    lock: t.lock ?? null,
    ...(t.mcp ? { mcp: t.mcp } : {}),
    ...(t.code_tool ? { code_tool: t.code_tool } : {}),
  };
}
