// Handoffs: each target agent becomes a `transfer_to_<name>` tool. Calling it makes the target the
// session's active agent for the rest of the turn and for later turns (the loop swaps its setup).
import { runByTheLoop, type ToolDefinition } from "./types";

export const HANDOFF_PREFIX = "transfer_to_";

export function handoffToolName(agent: string): string {
  return `${HANDOFF_PREFIX}${agent}`;
}

export function handoffTool(agent: string): ToolDefinition {
  return {
    name: handoffToolName(agent),
    description: `Hand the conversation over to the agent "${agent}". It continues this turn and later turns in your place.`,
    parameters: {
      type: "object",
      properties: { reason: { type: "string", description: "Why the conversation is handed over" } },
      additionalProperties: false,
    },
    permission_class: "safe",
    parallel_safe: false,
    idempotent: false,
    handoff_target: agent,
    execute: runByTheLoop,
  };
}
