// A fork cut while a turn waited for approvals (docs/guides/fork-and-replay.md): the turn comes back in the fork as a running turn
// suspended at the same approvals, with new action ids and fresh deadlines, so they can be decided differently.
import type { ModelMessage } from "ai";
import { randomTraceId } from "../../engine/trace";
import { newTurnState, type ToolCallRecord, type TurnState } from "../../engine/turn-state";
import { randomId } from "../../ids";
import type { AgentConfig } from "../../protocol/agent-config";
import type { EventDraft, PayloadOf } from "../../protocol/events";
import type { SessionStore } from "../store/session-store";

type Result = { output: unknown; is_error: boolean };
/** The action the cut call waited for (a tool approval or a question), asked again with a fresh deadline. */
type Asked = Omit<PayloadOf<"action.required">, "expires_at">;

/** What the fork needs of the cut turn: its input, its messages and steps, and its last response's calls. */
export interface PausedCut {
  input: string;
  messages: ModelMessage[];
  step: number;
  calls: { tool_call_id: string; name: string; args: unknown; result?: Result; asked?: Asked }[];
}

/** The results of the turn's tool calls recorded by `at` (its own level only), by call id. */
export function recordedResults(store: Pick<SessionStore, "forkReads">, turnId: string, at: number): Map<string, Result> {
  return new Map(
    store.forkReads.toolResults(turnId, at).map((r) => {
      const { output, is_error } = JSON.parse(r.payload) as Result;
      return [r.id, { output, is_error }];
    }),
  );
}

/** The cut turn when it waited for approvals at `at` (requested by then, not yet decided); null otherwise. */
export function pausedCut(
  store: Pick<SessionStore, "forkReads" | "turn">,
  turnId: string,
  at: number,
  prefix: ModelMessage[],
  step: number,
  results: Map<string, Result>,
): PausedCut | null {
  const last = prefix[prefix.length - 1];
  if (last?.role !== "assistant" || !Array.isArray(last.content)) return null;
  const asked = new Map(store.forkReads.openActions(turnId, at).map((r) => [r.tool_call_id, JSON.parse(r.payload) as Asked]));
  if (asked.size === 0) return null;
  const calls = last.content.flatMap((p) =>
    p.type === "tool-call"
      ? [{ tool_call_id: p.toolCallId, name: p.toolName, args: p.input, result: results.get(p.toolCallId), asked: asked.get(p.toolCallId) }]
      : [],
  );
  return { input: store.turn(turnId)?.input ?? "", messages: prefix, step, calls };
}

/** The fork's events and checkpoint for the cut turn: submitted, started, and waiting for its approvals again. */
export function pausedTurn(cut: PausedCut, agent: AgentConfig, now: number): { drafts: EventDraft[]; state: TurnState } {
  const turn_id = randomId("trn");
  const drafts: EventDraft[] = [
    { type: "turn.submitted", turn_id, trace: { trace_id: randomTraceId(), parent_span_id: null }, payload: { input: cut.input, queued: false } },
    { type: "turn.started", turn_id, payload: { agent: agent.name, model: agent.model } },
  ];
  const expires_at = now + agent.approval_timeout_ms;
  const calls: ToolCallRecord[] = cut.calls.map((c) => {
    const record: ToolCallRecord = { tool_call_id: c.tool_call_id, name: c.name, args: c.args, status: c.result ? "done" : "pending" };
    if (c.result) record.result = c.result;
    if (c.asked && !c.result) {
      const action_id = randomId("act");
      record.approval = { action_id, status: "pending", expires_at };
      drafts.push({
        type: "action.required",
        turn_id,
        tool_call_id: c.tool_call_id,
        action_id,
        payload: { ...c.asked, expires_at },
      });
    }
    return record;
  });
  const state: TurnState = { ...newTurnState(turn_id, cut.input, now), messages: cut.messages, step: cut.step, calls, paused_at: now };
  return { drafts, state };
}
