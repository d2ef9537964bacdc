// A turn's code tools (docs/guides/code-tools.md): the latest version of each name in the agent's `tools`
// that no built-in, HTTP tool or MCP reference answers, read from the registry when the turn starts. A name
// no longer registered (deleted since the agent was saved), or a registry that does not answer, is a warning
// and the turn runs without it.
import type { InProcessTools } from "../../engine/tools/in-process";
import { codeToolNames } from "../../engine/tools/toolbelt";
import type { ToolDefinition } from "../../engine/tools/types";
import type { Env } from "../../env";
import { registry } from "../../objects/registry/registry-object";
import type { AgentConfig } from "../../protocol/agent-config";
import type { CodeToolVersion } from "../../protocol/code-tools";
import { errorMessage } from "../../protocol/errors";
import { codeToolDefinition } from "../../sandbox/code-tool";

export interface DiscoveryWarning {
  code: string;
  server?: string;
  message: string;
}

/** The tools a turn learns only when it starts (its MCP servers' and its code tools), with what was left out. */
export interface Discovery {
  tools: ToolDefinition[];
  warnings: DiscoveryWarning[];
}

export async function discoverCodeTools(env: Env, config: AgentConfig, inProcess: InProcessTools): Promise<Discovery> {
  const names = codeToolNames(config, inProcess);
  if (names.length === 0) return { tools: [], warnings: [] };
  try {
    const found = (await registry(env).codeToolsNamed(names)) as CodeToolVersion[];
    const known = new Set(found.map((t) => t.name));
    return {
      tools: found.map((t) => codeToolDefinition(env, t)),
      warnings: names
        .filter((n) => !known.has(n))
        .map((n) => ({ code: "code_tool_not_found", message: `Code tool "${n}" is not registered; the turn runs without it` })),
    };
  } catch (err) {
    return {
      tools: [],
      warnings: [{ code: "code_tool_unavailable", message: `Code tools could not be read; the turn runs without them: ${errorMessage(err)}` }],
    };
  }
}
