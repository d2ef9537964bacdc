// What a turn has under way, folded from its events: the model calls and tool calls open, and the actions it
// waits for. The protocol streams (Responses, A2A) end their answer at a pause: when the turn waits for a person
// with nothing else of it running.
import type { EventOf, RuntimeEvent } from "../protocol/events";

export class TurnActivity {
  /** The approvals and questions waiting, by action id. */
  readonly awaiting = new Map<string, EventOf<"action.required">>();
  private readonly runningTools = new Set<string>();
  private readonly openModelCalls = new Set<string>();
  private readonly parentOf = new Map<string, string>();

  track(e: RuntimeEvent): void {
    if (e.tool_call_id && e.parent_id) this.parentOf.set(e.tool_call_id, e.parent_id);
    if (e.type === "model.requested" && e.step_id) this.openModelCalls.add(e.step_id);
    else if (e.type === "model.completed" && e.step_id) this.openModelCalls.delete(e.step_id);
    else if (e.type === "tool.started") this.runningTools.add(e.tool_call_id!);
    else if (e.type === "tool.result") this.runningTools.delete(e.tool_call_id!);
    else if (e.type === "action.required") this.awaiting.set(e.action_id!, e);
    else if (e.type === "action.resolved") this.awaiting.delete(e.action_id!);
  }

  /** Whether the turn waits for actions with nothing else of it under way. */
  paused(): boolean {
    if (this.awaiting.size === 0 || this.openModelCalls.size > 0) return false;
    // A waiting call, and the sub-agent calls enclosing it, wait too (a remote agent's question waits inside the
    // call that asked it); any other call still running keeps the turn busy.
    const blocked = new Set<string>();
    for (const a of this.awaiting.values()) {
      for (let c: string | undefined = a.tool_call_id!; c && !blocked.has(c); c = this.parentOf.get(c)) blocked.add(c);
    }
    for (const call of this.runningTools) if (!blocked.has(call)) return false;
    return true;
  }
}
