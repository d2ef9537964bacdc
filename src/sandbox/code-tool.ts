// A registered code tool as the engine sees it: a ToolDefinition whose calls run in the tool's Dynamic Worker.
import type { ToolDefinition } from "../engine/tools/types";
import type { Env } from "../env";
import type { CodeToolVersion } from "../protocol/code-tools";
import { runCodeTool } from "./dynamic-worker";

export function codeToolDefinition(env: Pick<Env, "LOADER">, tool: CodeToolVersion): ToolDefinition {
  const offline = tool.allowed_hosts.length === 0;
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.input_schema,
    // Without hosts a call reaches nothing outside its isolate: running it again after a restart is harmless.
    permission_class: offline ? "safe" : "network",
    parallel_safe: true,
    idempotent: offline,
    code_tool: { version: tool.version },
    execute: (args, ctx) => runCodeTool(env, tool, args, { session_id: ctx.session_id, turn_id: ctx.turn_id, tool_call_id: ctx.tool_call_id }, ctx.signal),
  };
}
