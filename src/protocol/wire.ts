// Request bodies and WebSocket client frames (docs/reference/api.md, docs/reference/events.md), shared by the HTTP routes and the socket.
import { z } from "zod";
import { DebounceMs, OnBusy } from "./busy";
import type { FieldIssue } from "./errors";
import { InputParts } from "./input-parts";

export const TurnInput = z
  .string()
  .min(1, "must not be empty")
  .max(200_000, "must be at most 200000 characters")
  .refine((s) => s.trim() !== "", { message: "must not be empty" });

export const SubmitTurnBody = z.strictObject({
  input: z.union([TurnInput, InputParts]).describe("text, or parts: text and files (docs/guides/files.md)"),
  idempotency_key: z.string().min(1).max(200).optional(),
  on_busy: OnBusy.optional().meta({ description: "What to do when a turn is running; absent: the agent's on_busy, else enqueue" }),
  debounce_ms: DebounceMs.optional(),
});
export type SubmitTurnBody = z.infer<typeof SubmitTurnBody>;

const MessageContent = z
  .string()
  .max(200_000, "must be at most 200000 characters")
  .refine((s) => s.trim().length > 0, { message: "must not be empty" });

export const InjectMessageBody = z.strictObject({ content: MessageContent });

/** The most characters a free-text answer to a person's question may hold: each string in an ask_user `response`. */
export const MAX_ANSWER_CHARS = 20_000;

/**
 * The first string in an answer (`response`, or a field or key of it) longer than MAX_ANSWER_CHARS, as a 422
 * issue at its path under `prefix`; null when there is none. Walked without recursion.
 */
export function longAnswerText(response: unknown, prefix: string): FieldIssue | null {
  const reason = `must be at most ${MAX_ANSWER_CHARS} characters`;
  const stack: [unknown, string][] = [[response, prefix]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === "string" && value.length > MAX_ANSWER_CHARS) return { path, reason };
    if (value === null || typeof value !== "object") continue;
    for (const [key, child] of Object.entries(value)) {
      if (key.length > MAX_ANSWER_CHARS) return { path, reason: `holds a key that ${reason}` };
      stack.push([child, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`]);
    }
  }
  return null;
}

/** A decision on a tool approval, or (with `response`) the answer to an ask_user question. */
export const ActionDecisionBody = z.strictObject({
  decision: z.enum(["approve", "reject"]).optional().describe("required for a tool approval; reject declines a question"),
  reason: z.string().max(1000).optional(),
  response: z
    .unknown()
    .optional()
    .describe(`a user_input action's answer, checked against its response_schema; each string in it at most ${MAX_ANSWER_CHARS} characters`),
  args: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("with approve: the call runs with these arguments instead, checked against the tool's parameters"),
});

export const InterruptBody = z.strictObject({ reason: z.string().max(1000).optional() });

const requestId = z.union([z.string().max(200), z.number()]).optional();

/** A command frame: the body of the HTTP operation it stands for, with its type and an optional request_id. */
const frame = <T extends string, Shape extends z.ZodRawShape>(type: T, body: z.ZodObject<Shape, z.core.$strict>) =>
  body.extend({ type: z.literal(type), request_id: requestId });

export const ClientFrame = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("ack"), sequence: z.int().min(0), request_id: requestId }),
  frame("submit_turn", SubmitTurnBody),
  frame("respond_action", ActionDecisionBody.extend({ action_id: z.string().min(1) })),
  frame("interrupt", InterruptBody),
  frame("inject_message", InjectMessageBody),
]);
export type ClientFrame = z.infer<typeof ClientFrame>;

// ---- what the turn operations answer ----

const TurnStatus = z.enum(["accepted", "queued"]);
export const TurnAccepted = z.object({ turn_id: z.string(), status: TurnStatus });
export type TurnAccepted = z.infer<typeof TurnAccepted>;
/**
 * A submission's answer: `duplicate` when an earlier one with the same idempotency key made the turn;
 * `injected` (with `message_id`) when on_busy "inject" made it a live message of the running turn `turn_id`;
 * `superseded_turn_id` when on_busy "interrupt" cancelled that running turn for this one.
 */
export const TurnSubmitted = TurnAccepted.extend({
  status: z.enum(["accepted", "queued", "injected"]),
  duplicate: z.boolean().optional(),
  message_id: z.string().optional(),
  superseded_turn_id: z.string().optional(),
});
export type TurnSubmitted = z.infer<typeof TurnSubmitted>;

/** What POST .../messages (and inject_message) answers: taken by the running turn, or a new turn. */
export const InjectResult = z.union([
  z.object({ delivery: z.literal("injected"), turn_id: z.string(), message_id: z.string() }),
  z.object({ delivery: z.literal("new_turn"), turn_id: z.string(), status: TurnStatus }),
]);
export type InjectResult = z.infer<typeof InjectResult>;

/** What a decision on a pending approval answers. */
export const ActionResolved = z.object({
  action_id: z.string(),
  turn_id: z.string(),
  tool_call_id: z.string(),
  decision: z
    .enum(["approved", "rejected", "timed_out", "answered", "pending"])
    .describe("pending: an approval toward a quorum that is not reached yet (approvals says how far)"),
  approvals: z.object({ recorded: z.number(), required: z.number() }).optional().describe("a tool that needs several approvals"),
});
export type ActionResolved = z.infer<typeof ActionResolved>;
/** How a pending approval ended. */
export type ApprovalDecision = Exclude<ActionResolved["decision"], "pending">;

export const InterruptResult = z.object({ interrupted: z.boolean(), turn_id: z.string().nullable() });
export type InterruptResult = z.infer<typeof InterruptResult>;

export const QueueResult = z.object({ queued: z.array(z.string()) });
export type QueueResult = z.infer<typeof QueueResult>;
