// The tools an agent exposes in a turn: its built-ins, its HTTP tools and its handoff tools, by name.
import type { AgentConfig } from "../config";
import { BUILTIN_TOOLS } from "./builtins";
import { handoffTool, handoffToolName } from "./handoff";
import { httpTool } from "./http-tool";
import type { ToolDefinition } from "./types";

export function resolveToolbelt(config: AgentConfig): Map<string, ToolDefinition> {
  const belt = new Map<string, ToolDefinition>();
  for (const name of config.tools) {
    const builtin = BUILTIN_TOOLS.get(name);
    if (builtin) belt.set(name, builtin);
  }
  // Declaring an HTTP tool on the agent is enough to expose it; listing it in `tools` too is allowed.
  for (const spec of config.http_tools) belt.set(spec.name, httpTool(spec));
  for (const agent of config.handoffs) belt.set(handoffToolName(agent), handoffTool(agent));
  return belt;
}

export function describeTool(t: ToolDefinition) {
  return {
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    permission_class: t.permission_class,
    parallel_safe: t.parallel_safe,
  };
}
