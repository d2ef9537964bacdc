// The human decisions of a recorded turn, for its replay (docs/guides/fork-and-replay.md): a call that asks for the same approval or
// question as a recorded one (same tool, same arguments) is answered with the recorded decision at once, instead
// of waiting for a person again, as long as that runs nothing live: an approval answers only a call whose result
// also comes from the recording, so a tool that would run again (live tools, or no recorded result) waits for a
// live decision. Decisions the recorded turn's end made (it was cut short) are not replayed, and a call the
// recording never asked about waits as usual.
import type { EventDraft } from "../protocol/events";
import type { ApprovalDecision } from "../protocol/wire";
import { canonicalJson } from "./request-fingerprint";
import { cutDecisionReason } from "./turn-state";

/** Who the replay's own action.resolved names: the decision comes from the recording, not from a person. */
export const REPLAY_DECIDER = "replay";

export interface RecordedAnswer {
  tool_name: string;
  /** The arguments the call asked with (without injected ones). */
  args: unknown;
  decision: ApprovalDecision;
  reason: string | null;
  response?: unknown;
  /** An approver's edit of the arguments. */
  edited?: Record<string, unknown>;
}

const CUT_REASONS = new Set([cutDecisionReason("cancelled"), cutDecisionReason("interrupted")]);
const keyOf = (name: string, args: unknown) => `${name}\u0000${canonicalJson(args)}`;

/** The root agent's decided actions of a recorded turn, in the order they were asked. */
export function recordedDecisions(events: readonly EventDraft[]): RecordedAnswer[] {
  const asked = new Map<string, { tool_name: string; args: unknown }>();
  const decided: RecordedAnswer[] = [];
  for (const e of events) {
    if (e.subagent_id || !e.action_id) continue;
    if (e.type === "action.required") asked.set(e.action_id, { tool_name: e.payload.tool_name, args: e.payload.args });
    const call = asked.get(e.action_id);
    if (e.type !== "action.resolved" || !call) continue;
    const p = e.payload;
    if (p.by === "runtime" && p.reason !== null && CUT_REASONS.has(p.reason)) continue;
    decided.push({
      ...call,
      decision: p.decision,
      reason: p.reason,
      ...("response" in p ? { response: p.response } : {}),
      ...(p.args ? { edited: p.args } : {}),
    });
  }
  return decided;
}

/**
 * Answers a replayed call from `recorded`, each recorded decision once; `used` are the calls (tool name and
 * arguments) the replay already answered so, before a restart. An approval answers only when
 * `answersFromRecording` says the call (with the approver's edits) gets its recorded result: a decision given
 * for the recorded run never lets a tool run again.
 */
export function decisionsFrom(
  recorded: RecordedAnswer[],
  used: { tool_name: string; args: unknown }[],
  answersFromRecording: (toolName: string, args: unknown) => boolean,
) {
  const unused = new Map<string, RecordedAnswer[]>();
  for (const d of recorded) unused.set(keyOf(d.tool_name, d.args), [...(unused.get(keyOf(d.tool_name, d.args)) ?? []), d]);
  for (const u of used) unused.get(keyOf(u.tool_name, u.args))?.shift();
  return (toolName: string, args: unknown): RecordedAnswer | null => {
    const queue = unused.get(keyOf(toolName, args));
    const next = queue?.[0];
    if (!next || (next.decision === "approved" && !answersFromRecording(toolName, next.edited ?? args))) return null;
    return queue.shift() ?? null;
  };
}

/** The action.resolved a replay records for a call the recording answered (emit adds the level's envelope). */
export function replayedDecision(recorded: RecordedAnswer, ids: { turn_id: string; step_id?: string; tool_call_id: string; action_id: string }): EventDraft {
  const { decision, reason, response, edited } = recorded;
  const payload = {
    decision,
    tool_name: recorded.tool_name,
    by: REPLAY_DECIDER,
    reason,
    ...(decision === "answered" ? { response } : {}),
    ...(edited ? { args: edited } : {}),
  };
  return { type: "action.resolved", ...ids, payload };
}
