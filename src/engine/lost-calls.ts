// No model call paid twice, the part every provider allows (docs/guides/subagents-and-budgets.md, "Calls lost
// to a restart"): before a call starts, its reservation (call-estimate.ts: the most it may cost, the figure
// quotas reserve too) goes into model.requested and the turn's checkpoint. When the object
// dies with the call under way, the provider may have billed it and nobody saw the bill: the recovery records
// the reservation as usage.lost, an estimate, counted by the turn's budget and the session's usage, before the
// call is sent again.
import type { EventDraft } from "../protocol/events";
import type { CallEstimate } from "./call-estimate";
import { addUsage } from "./turn-context";
import { levels, type OpenModelStep, type TurnState, type Usage } from "./turn-state";

/** The most a call may cost, as recorded before it starts (call-estimate.ts). */
export interface CallReservation extends CallEstimate {
  model: string;
  request_hash: string;
}

/**
 * usage.lost for every call a restart left under way, at any level of the turn; each one's usage and cost
 * are added to the turn (the root's cost is what the budget checks). A call whose provider response can be read
 * again is not lost: it is kept as the level's `reattach`, for the call made again to re-attach to
 * (response-attach.ts). Called before the calls are closed.
 */
export function lostCalls(root: TurnState): EventDraft[] {
  const events: EventDraft[] = [];
  for (const { state, parent_id, depth, subagent_id } of levels(root)) {
    const open = state.open_model_step;
    const reservation = open?.reservation;
    if (!open || !reservation) continue; // a call recorded before reservations were
    if (open.response_id) {
      state.reattach = open;
      continue;
    }
    events.push({ ...lostCall(root, state, { ...open, reservation }), ...(depth > 0 ? { parent_id, depth, ...(subagent_id ? { subagent_id } : {}) } : {}) });
  }
  return events;
}

/** usage.lost for the call `open` of level `state` (a restart cut it, and its response cannot be read again), charged to the turn. */
export function lostCall(
  root: TurnState,
  state: TurnState,
  open: OpenModelStep & { reservation: CallReservation },
  /** The provider's HTTP status when the call's response was asked for again and could not be read. */
  retrieval_status?: number,
): EventDraft {
  const { model, request_hash, input_tokens, max_output_tokens, cost_usd } = open.reservation;
  const usage = reservedUsage(input_tokens, max_output_tokens);
  state.usage = addUsage(state.usage, usage);
  if (state !== root) root.usage = addUsage(root.usage, usage);
  if (cost_usd !== null) root.cost_usd = (root.cost_usd ?? 0) + cost_usd;
  return {
    type: "usage.lost",
    turn_id: root.turn_id,
    step_id: open.step_id,
    payload: { model, phase: open.phase, request_hash, usage, cost_usd, estimate: true, ...(retrieval_status === undefined ? {} : { retrieval_status }) },
  };
}

function reservedUsage(input_tokens: number, output_tokens: number): Usage {
  return { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens };
}
