// A turn's end releases the questions it left waiting (a remote A2A task's input-required), so that the remote
// task does not wait for ever (engine/dropped-questions.ts). Best effort and once: only the recording of the
// turn's end calls this, after its transaction; the outcome is recorded (question.dropped), never retried.
import { droppedQuestions, releaseQuestions } from "../../engine/dropped-questions";
import { ALL_CLASSES_POLICY, resolveToolbelt } from "../../engine/tools/toolbelt";
import type { TurnState } from "../../engine/turn-state";
import { parseAllowlist } from "../../engine/url-allowlist";
import { ApiError } from "../../protocol/errors";
import type { RunnerSession } from "./turn-session";

/** What to run once the end of `state`'s turn is committed (nothing when no question waited). */
export function questionRelease(s: RunnerSession, state: TurnState, how: "cancelled" | "interrupted"): () => void {
  const dropped = droppedQuestions(state);
  if (dropped.length === 0) return () => {};
  // Read before the end's transaction: an erased session has no agent or row afterwards. The call was allowed
  // when it was made, so the policy's classes do not hide its tool now.
  const tools = resolveToolbelt(s.agent(), ALL_CLASSES_POLICY);
  const ctx = {
    session_id: s.row().session_id,
    fetch: (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init),
    urlAllowlist: parseAllowlist(s.bindings().TOOL_URL_ALLOWLIST),
    signal: new AbortController().signal, // nothing cuts it short: each cancel has its own grace period
  };
  return () => {
    releaseQuestions(state.turn_id, dropped, tools, how, ctx)
      .then((drafts) => s.commit(drafts))
      .catch((err) => {
        // An erased session records nothing more: its remote tasks were told all the same.
        if (!(err instanceof ApiError && err.code === "not_found")) console.error("recording the questions a turn's end dropped failed", state.turn_id, err);
      });
  };
}
