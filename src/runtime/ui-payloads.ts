// Every read of an event payload that the AI SDK front end's projections (ui-stream.ts, ui-messages.ts)
// make, in one place: when event payloads get their own types, this is the one file to adapt.
import type { RuntimeEvent } from "../protocol/events";

type Payload = Record<string, unknown>;

const payload = (e: RuntimeEvent): Payload => e.payload as Payload;
const text = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
const optionalText = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export const read = {
  /** turn.submitted: the user's input and the idempotency key it was submitted with. */
  submitted: (e: RuntimeEvent) => ({ input: text(payload(e).input), key: optionalText(payload(e).idempotency_key) ?? null }),
  /** model.requested: planner, executor or compaction. */
  phase: (e: RuntimeEvent) => optionalText(payload(e).phase) ?? "executor",
  /** model.delta and reasoning.summary. */
  text: (e: RuntimeEvent) => text(payload(e).text),
  /** tool.started, tool.result, action.required. */
  tool: (e: RuntimeEvent) => ({ name: text(payload(e).name ?? payload(e).tool_name), args: payload(e).args ?? {} }),
  /** tool.result: a refused call (a person rejected it, or nobody decided in time) never ran. */
  result: (e: RuntimeEvent) => {
    const status = (payload(e).metadata as Payload | undefined)?.status;
    return { output: payload(e).output ?? null, isError: payload(e).is_error === true, refused: status === "rejected" || status === "timed_out" };
  },
  /** action.resolved. */
  decision: (e: RuntimeEvent) => ({ approved: payload(e).decision === "approved", reason: optionalText(payload(e).reason) }),
  /** subagent.spawned. */
  spawned: (e: RuntimeEvent) => ({ title: text(payload(e).title), index: Number(payload(e).index ?? 0) }),
  /** subagent.completed and subagent.failed. */
  subagentEnd: (e: RuntimeEvent) => ({ result: payload(e).result, error: optionalText(payload(e).error) }),
  /** turn.completed. */
  completed: (e: RuntimeEvent) => ({ output: payload(e).output, stop_reason: text(payload(e).stop_reason), usage: payload(e).usage }),
  /** turn.failed. */
  failed: (e: RuntimeEvent) => {
    const error = (payload(e).error ?? {}) as Payload;
    return { code: text(error.code) || "internal_error", message: text(error.message) };
  },
  /** queue.changed: the queued turn ids, in the order they will run. */
  queue: (e: RuntimeEvent) => (Array.isArray(payload(e).queued) ? (payload(e).queued as string[]) : []),
  /** turn.cancelled. */
  cancelReason: (e: RuntimeEvent) => text(payload(e).reason),
};
