// Decisions on pending approvals, by a person or by the deadline. A decision is recorded as its
// action.resolved event (the actions table and the deadline's schedule entry follow from it); the running
// loop applies it to the turn's state, and a turn suspended waiting for it is resumed.

import { redactStage } from "../../engine/guardrails/run";
import { fieldPath, schemaIssues } from "../../engine/json-schema";
import { ApiError } from "../../protocol/errors";
import type { ResponsesRequestRecord } from "../../protocol/event-shapes";
import type { EventDraft, PayloadOf } from "../../protocol/events";
import { approverIdentity, distinctKeysSetting } from "../../protocol/principal-id";
import { type ActionResolved, type ApprovalDecision, longAnswerText } from "../../protocol/wire";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost, TurnsHost } from "../hosts";
import { ACTION_REMINDER, APPROVAL_DEADLINE } from "../store/projections";
import type { ActionRow } from "../store/session-store";

/** The slice of the session approvals works on. */
export type ApprovalsSession = LogHost & TurnsHost & SettingsHost;

export class Approvals {
  constructor(
    private readonly s: ApprovalsSession,
    /** Lets the running turn go on with the decision (resumes it when it is suspended). */
    private readonly decided: (turnId: string) => void,
  ) {}

  decide(
    actionId: string,
    decision: ApprovalDecision,
    reason: string | null,
    by: string,
    given: Partial<Pick<PayloadOf<"action.resolved">, "response" | "args" | "approved_by" | "responses_request">> = {},
    before: EventDraft[] = [],
  ): ActionResolved {
    const action = this.pending(actionId);
    this.s.commit([
      ...before,
      {
        type: "action.resolved",
        ...envelope(action),
        payload: { decision, tool_name: action.tool_name, by, reason, ...given },
      },
    ]);
    this.decided(action.turn_id);
    return { action_id: actionId, turn_id: action.turn_id, tool_call_id: action.tool_call_id, decision };
  }

  /** The action, still pending on the running turn (404 or 409 otherwise). */
  private pending(actionId: string): ActionRow {
    const { store } = this.s;
    const action = store.action(actionId);
    if (!action) throw ApiError.notFound("Action", actionId);
    if (action.status !== "pending") {
      throw new ApiError("conflict", `Action '${actionId}' was already resolved (${action.status})`, { status: action.status });
    }
    if (store.runningTurn()?.turn_id !== action.turn_id) {
      throw new ApiError("conflict", `Action '${actionId}' belongs to a turn that is no longer running`);
    }
    return action;
  }

  /**
   * A person's decision: approve or reject a tool call, or answer (or, with reject, decline) a question. A body
   * that does not fit the action's kind, or an answer its response schema refuses, is 422 and records nothing.
   */
  respond(actionId: string, body: DecisionBody, by: string, responses?: ResponsesRequestRecord): ActionResolved {
    const action = this.pending(actionId);
    const reason = body.reason ?? null;
    // A decision sent to POST /v1/responses begins a response: the request's fields it echoes are recorded with it.
    const tag = responses ? { responses_request: responses } : {};
    if (action.kind === "user_input") {
      if (body.args !== undefined) throw ApiError.validation([{ path: "args", reason: "edits a tool approval's arguments; a question takes response" }]);
      if (body.decision === "reject") return this.decide(actionId, "rejected", reason, by, tag);
      if (body.response === undefined)
        throw ApiError.validation([{ path: "response", reason: "is required to answer a question (or decision: reject to decline it)" }]);
      const long = longAnswerText(body.response, "response");
      if (long) throw ApiError.validation([long]);
      checkAgainst(JSON.parse(action.response_schema ?? '{"type":"string"}'), body.response, "response");
      return this.decide(actionId, "answered", reason, by, { response: body.response, ...tag });
    }
    if (body.response !== undefined)
      throw ApiError.validation([{ path: "response", reason: "answers a question (user_input); a tool approval takes decision" }]);
    if (!body.decision) throw ApiError.validation([{ path: "decision", reason: "is required (approve or reject)" }]);
    if (body.decision === "reject") {
      if (body.args !== undefined) throw ApiError.validation([{ path: "args", reason: "edits go with decision: approve" }]);
      return this.decide(actionId, "rejected", reason, by, tag);
    }
    if (action.approvals_required > 1) return this.approveInQuorum(action, body, by, tag);
    if (body.args === undefined) return this.decide(actionId, "approved", reason, by, tag);
    if (action.args_schema === null)
      throw ApiError.validation([{ path: "args", reason: `the arguments of "${action.tool_name}" may not be edited (allow_edits: false)` }]);
    checkAgainst(JSON.parse(action.args_schema), body.args, "args");
    // An edit passes the tool_input guardrails like the model's arguments: the redactions here, before it is
    // stored (their verdicts logged with it); the other rules in the turn, before the call starts (tool-calls.ts).
    const { value, verdicts } = redactStage(this.s.agent().guardrails, "tool_input", body.args);
    const checked: EventDraft[] = verdicts.map((v) => ({ type: "guardrail.checked", ...envelope(action), payload: v }));
    return this.decide(actionId, "approved", reason, by, { args: value as Record<string, unknown>, ...tag }, checked);
  }

  /**
   * One approval toward a quorum of distinct principals: recorded as action.approval.recorded, and the last one
   * needed resolves the action (approved, by every approver). The same principal twice is 409: the same key,
   * or a token of the same normalized subject minted by the same key (`reviewer` and `Reviewer `), or, with
   * APPROVAL_QUORUM_DISTINCT_KEYS, any principal of a key already counted (principal-id.ts).
   */
  private approveInQuorum(action: ActionRow, body: DecisionBody, by: string, tag: { responses_request?: ResponsesRequestRecord }): ActionResolved {
    const required = action.approvals_required;
    if (body.args !== undefined)
      throw ApiError.validation([
        { path: "args", reason: `"${action.tool_name}" needs ${required} approvals: it runs with the arguments as the model made them` },
      ]);
    const approvedBy = action.approved_by ? (JSON.parse(action.approved_by) as string[]) : [];
    const distinctKeys = distinctKeysSetting(this.s.bindings().APPROVAL_QUORUM_DISTINCT_KEYS);
    const identity = approverIdentity(by, distinctKeys);
    if (approvedBy.some((prior) => approverIdentity(prior, distinctKeys) === identity)) {
      const who = distinctKeys ? "a principal of the same API key (APPROVAL_QUORUM_DISTINCT_KEYS)" : "this principal";
      throw new ApiError("conflict", `Action '${action.action_id}' was already approved by ${who}; it needs ${required} distinct approvers`, {
        approved_by: approvedBy,
      });
    }
    const reason = body.reason ?? null;
    const approvals = approvedBy.length + 1;
    const recorded: EventDraft = {
      type: "action.approval.recorded",
      ...envelope(action),
      payload: { tool_name: action.tool_name, by, reason, approvals, approvals_required: required },
    };
    const progress = { approvals: { recorded: approvals, required } };
    if (approvals === required) {
      const resolved = this.decide(action.action_id, "approved", reason, by, { approved_by: [...approvedBy, by], ...tag }, [recorded]);
      return { ...resolved, ...progress };
    }
    this.s.commit([recorded]);
    return { action_id: action.action_id, turn_id: action.turn_id, tool_call_id: action.tool_call_id, decision: "pending", ...progress };
  }

  /** The alarm found an approval's deadline due: nobody decided in time; the tool's on_timeout says what that means. */
  expire(actionId: string): void {
    const action = this.s.store.action(actionId);
    if (action?.status !== "pending") return;
    if (action.on_timeout === "approve") this.decide(actionId, "approved", "no decision before the deadline (on_timeout: approve)", "runtime");
    else this.decide(actionId, "timed_out", "no decision before the deadline", "runtime");
  }

  /** A reminder is due: the action still waits, say so (and when the next reminder comes, if before the deadline). */
  remind(actionId: string, now: number): void {
    const action = this.s.store.action(actionId);
    if (action?.status !== "pending" || !action.remind_after_ms) return;
    const next = now + action.remind_after_ms;
    this.s.commit([
      {
        type: "action.reminder",
        ...envelope(action),
        payload: { kind: action.kind, tool_name: action.tool_name, expires_at: action.expires_at, next_at: next < action.expires_at ? next : null },
      },
    ]);
  }

  /** Its session operation (a person's decision) and its alarm kinds (an action's deadline and reminders). */
  capability() {
    return {
      operations: {
        resolveAction: ({ params, body, by, responses }) => this.respond(params.action_id, body, by, responses),
      },
      alarms: [
        { kind: APPROVAL_DEADLINE, prefix: true, fire: (_now, actionId) => this.expire(actionId) },
        { kind: ACTION_REMINDER, prefix: true, fire: (now, actionId) => this.remind(actionId, now) },
      ],
    } satisfies Capability;
  }
}

/** The envelope of an action's events: the same as its action.required's, so a sub-agent's stay under its parent call. */
function envelope(action: ActionRow) {
  return {
    turn_id: action.turn_id,
    action_id: action.action_id,
    tool_call_id: action.tool_call_id,
    parent_id: action.parent_id,
    depth: action.depth,
    ...(action.subagent_id ? { subagent_id: action.subagent_id } : {}),
  };
}

type DecisionBody = { decision?: "approve" | "reject"; reason?: string; response?: unknown; args?: Record<string, unknown> };

/** 422 naming each path of the body field where the value breaks the schema. */
function checkAgainst(schema: Record<string, unknown>, value: unknown, field: string): void {
  const issues = schemaIssues(schema, value);
  if (issues.length > 0) throw ApiError.validation(issues.map((i) => ({ path: fieldPath(field, i.pointer), reason: i.reason })));
}
