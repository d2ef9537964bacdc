// Spilling a tool call's payload (arguments, result) too large for the log: stored whole in R2, with a preview.
import { toolPayloadLimit } from "../protocol/agent-config";
import type { TurnSetup } from "./ports";
import type { Turn } from "./turn-context";
import type { ToolCallRecord, TurnState } from "./turn-state";

/** How much of a spilled payload the log and the model see. */
const SPILL_PREVIEW_BYTES = 2_000;

/**
 * Keeps a payload of a tool call within max_tool_result_bytes: a larger one is stored whole in R2 and
 * replaced by a preview naming its artifact, so no event (and no model prompt) carries it.
 */
export async function forLog(
  value: unknown,
  call: ToolCallRecord,
  state: TurnState,
  setup: TurnSetup,
  turn: Turn,
): Promise<{ value: unknown; artifact?: { id: string; bytes: number } }> {
  const max = toolPayloadLimit(setup.config);
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text.length * 3 <= max) return { value }; // a UTF-16 unit is at most 3 bytes of UTF-8: no need to count
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= max) return { value };
  const content_type = typeof value === "string" ? "text/plain; charset=utf-8" : "application/json";
  const id = await turn.ports.spill(text, { turn_id: state.turn_id, tool_call_id: call.tool_call_id, tool_name: call.name, content_type });
  const head = new TextDecoder().decode(bytes.subarray(0, Math.min(max, SPILL_PREVIEW_BYTES))).replace(/\uFFFD$/, "");
  return {
    value: `${head}\n[truncated: ${bytes.byteLength} bytes in all; the whole is artifact ${id}]`,
    artifact: { id, bytes: bytes.byteLength },
  };
}

export function refsOf(artifact: { id: string; bytes: number } | undefined): { refs?: { kind: string; id: string; bytes: number }[] } {
  return artifact ? { refs: [{ kind: "artifact", id: artifact.id, bytes: artifact.bytes }] } : {};
}
