// The turn's side of re-attaching to a call a restart cut (response-attach.ts does the provider's side): a
// call's response id is recorded the moment the provider names it (model.attached, and the open model step of
// the checkpoint), and the call made again after the restart, with the same request, reads that response
// instead of sending the request again. Nothing is charged for the cut call then: the re-attached call's usage
// is the one bill. When the response cannot be read again, the cut call is lost after all (usage.lost).
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { lostCall } from "./lost-calls";
import { settleCut } from "./quota-reservation";
import { attachableModels, CALL_HEADER, hookCall } from "./response-attach";
import type { Level, Turn } from "./turn-context";
import type { TurnState } from "./turn-state";

/**
 * Whether the call about to be made with `model` and fingerprint `request_hash` reads the response of the level's
 * cut call (the same request, a model that re-attaches): then it is that call, not a new one.
 */
export function reattaches(state: TurnState, model: LanguageModelV3, request_hash: string): boolean {
  const cut = state.reattach;
  return Boolean(cut?.response_id && cut.reservation?.request_hash === request_hash && attachableModels.has(model));
}

/**
 * Before the level's open model call is made with `model` and `options` (model.requested recorded): re-attaches
 * it to the level's cut call when that had the same request, else records the cut call as lost. Answers the
 * options to call with and a release for when the call is over.
 */
export function attachCall(
  level: Level,
  turn: Turn,
  model: LanguageModelV3,
  options: LanguageModelV3CallOptions,
): { options: LanguageModelV3CallOptions; release(): void } {
  const { state } = level;
  const open = state.open_model_step;
  const cut = state.reattach?.reservation ? { ...state.reattach, reservation: state.reattach.reservation } : null;
  const attachable = attachableModels.has(model) && open ? open : null;
  const reattached = attachable?.reservation && reattaches(state, model, attachable.reservation.request_hash) ? cut : null;
  state.reattach = null;
  // Another request now (a message arrived meanwhile), or a model that cannot re-attach: the cut call is lost.
  if (cut && !reattached) turn.emit(level, [lostCall(turn.root, state, cut)]);
  if (cut) settleCut(turn.ports.quota, cut, !reattached);
  if (!attachable) return { options, release: () => {} };
  const { turn_id } = state;
  const { step_id } = attachable;
  const record = (response_id: string) => {
    attachable.response_id = response_id;
    const from = reattached?.response_id === response_id ? { reattached_from: reattached.step_id } : {};
    turn.emit(level, [{ type: "model.attached", turn_id, step_id, payload: { provider: "openai", response_id, ...from } }]);
  };
  // Recorded before the request is made: a restart while it is read again re-attaches again.
  if (reattached) record(reattached.response_id!);
  const token = turn.ports.newId("call");
  const release = hookCall(token, {
    response_id: reattached?.response_id,
    attached: (response_id) => {
      if (attachable.response_id !== response_id) record(response_id);
    },
    missed: (status) => {
      attachable.response_id = undefined;
      if (!reattached) return;
      turn.emit(level, [lostCall(turn.root, state, reattached, status)]);
      settleCut(turn.ports.quota, reattached, true);
      // Sent again after all: a second call, which callModel did not charge (the call is on its way, so no limit stops it).
      turn.used.llm_calls += 1;
    },
  });
  return { options: { ...options, headers: { ...options.headers, [CALL_HEADER]: token } }, release };
}
