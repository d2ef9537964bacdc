// Decisions on pending approvals, by a person or by the deadline. A decision is recorded as its
// action.resolved event (the actions table and the deadline's schedule entry follow from it); the running
// loop applies it to the turn's state, and a turn suspended waiting for it is resumed.

import { ApiError } from "../protocol/errors";
import type { ActionResolved, ApprovalDecision } from "../protocol/wire";
import { APPROVAL_DEADLINE } from "./projections";
import type { Capability } from "./session-capability";
import type { SessionContext } from "./session-context";

/** The slice of the session approvals works on. */
export type ApprovalsSession = Pick<SessionContext, "commit" | "store">;

export class Approvals {
  constructor(
    private readonly s: ApprovalsSession,
    /** Lets the running turn go on with the decision (resumes it when it is suspended). */
    private readonly decided: (turnId: string) => void,
  ) {}

  decide(actionId: string, decision: ApprovalDecision, reason: string | null, by: string): ActionResolved {
    const { store } = this.s;
    const action = store.action(actionId);
    if (!action) throw ApiError.notFound("Action", actionId);
    if (action.status !== "pending") {
      throw new ApiError("conflict", `Action '${actionId}' was already resolved (${action.status})`, { status: action.status });
    }
    if (store.runningTurn()?.turn_id !== action.turn_id) {
      throw new ApiError("conflict", `Action '${actionId}' belongs to a turn that is no longer running`);
    }
    this.s.commit([
      {
        type: "action.resolved",
        turn_id: action.turn_id,
        action_id: actionId,
        tool_call_id: action.tool_call_id,
        // The same envelope as its action.required: a sub-agent's decision stays under its parent call.
        parent_id: action.parent_id,
        depth: action.depth,
        ...(action.subagent_id ? { subagent_id: action.subagent_id } : {}),
        payload: { decision, tool_name: action.tool_name, by, reason },
      },
    ]);
    this.decided(action.turn_id);
    return { action_id: actionId, turn_id: action.turn_id, tool_call_id: action.tool_call_id, decision };
  }

  /** The alarm found an approval's deadline due: nobody decided in time. */
  expire(actionId: string): void {
    if (this.s.store.action(actionId)?.status === "pending") this.decide(actionId, "timed_out", "no decision before the deadline", "runtime");
  }

  /** Its session operation (a person's decision) and its alarm kind (an approval's deadline). */
  capability(): Capability {
    return {
      operations: {
        resolveAction: ({ params, body, by }) => {
          const { decision, reason } = body as { decision: "approve" | "reject"; reason?: string };
          return this.decide(params.action_id!, decision === "approve" ? "approved" : "rejected", reason ?? null, by);
        },
      },
      alarms: [{ kind: APPROVAL_DEADLINE, prefix: true, fire: (_now, actionId) => this.expire(actionId) }],
    };
  }
}
