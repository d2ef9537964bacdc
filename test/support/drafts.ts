// Event drafts the tests build by hand, as the loop would emit them.
import type { EventDraft } from "../../src/protocol/events";

/** A successful tool.result draft for call `tool_call_id` of turn `turn_id`. */
export function toolResultDraft(turn_id: string, tool_call_id: string, name: string, output: string): EventDraft {
  return {
    type: "tool.result",
    turn_id,
    tool_call_id,
    payload: {
      name,
      output,
      is_error: false,
      metadata: {
        status: "success",
        started_at: 1,
        completed_at: 2,
        execution_time_ms: 1,
        approval_status: "not_required",
        approval_id: null,
        injected_args: {},
        offloaded_artifact_id: null,
      },
    },
  };
}
