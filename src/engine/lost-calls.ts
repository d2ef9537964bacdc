// No model call paid twice, the part every provider allows (docs/guides/subagents-and-budgets.md, "Calls lost
// to a restart"): before a call starts, its reservation (the request's input tokens estimated, plus the most
// it may write, at the model's prices) goes into model.requested and the turn's checkpoint. When the object
// dies with the call under way, the provider may have billed it and nobody saw the bill: the recovery records
// the reservation as usage.lost, an estimate, counted by the turn's budget and the session's usage, before the
// call is sent again.
import type { ModelMessage } from "ai";
import type { EventDraft } from "../protocol/events";
import { estimateTokens } from "./context-budget";
import { costOf, type PriceOverrides } from "./pricing";
import { addUsage } from "./turn-context";
import { levels, type OpenModelStep, type TurnState, type Usage } from "./turn-state";

/** What a call is assumed to be able to write when it sets no max_tokens (a spend quota also caps such a call at it). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** The most a call may cost, as recorded before it starts. */
export interface CallReservation {
  model: string;
  request_hash: string;
  input_tokens: number;
  max_output_tokens: number;
  /** null: the model's price is not known. */
  cost_usd: number | null;
}

/** The most a call may cost, estimated from its request (recorded on model.requested; a lost call is charged this). */
export function estimateCall(
  model: string,
  request_hash: string,
  request: { system?: string; messages: ModelMessage[]; maxOutputTokens?: number },
  prices: PriceOverrides | undefined,
): CallReservation {
  const input_tokens = estimateTokens(request.system, request.messages);
  const max_output_tokens = request.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const cost_usd = costOf(model, reservedUsage(input_tokens, max_output_tokens), prices);
  return { model, request_hash, input_tokens, max_output_tokens, cost_usd };
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
