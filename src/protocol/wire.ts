// Request bodies and WebSocket client frames (SPEC §4, §5), shared by the HTTP routes and the socket.
import { z } from "zod";
/** How a pending approval ended. */
export type ApprovalDecision = "approved" | "rejected" | "timed_out";

export const TurnInput = z.string().min(1, "must not be empty").max(200_000, "must be at most 200000 characters");

export const SubmitTurnBody = z.strictObject({
  input: TurnInput,
  idempotency_key: z.string().min(1).max(200).optional(),
});
export type SubmitTurnBody = z.infer<typeof SubmitTurnBody>;

const MessageContent = z
  .string()
  .max(200_000, "must be at most 200000 characters")
  .refine((s) => s.trim().length > 0, { message: "must not be empty" });

export const InjectMessageBody = z.strictObject({ content: MessageContent });

export const ActionDecisionBody = z.strictObject({
  decision: z.enum(["approve", "reject"]),
  reason: z.string().max(1000).optional(),
});

export const InterruptBody = z.strictObject({ reason: z.string().max(1000).optional() });

const requestId = z.union([z.string().max(200), z.number()]).optional();

export const ClientFrame = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("ack"), sequence: z.int().min(0), request_id: requestId }),
  z.strictObject({
    type: z.literal("submit_turn"),
    input: TurnInput,
    idempotency_key: z.string().min(1).max(200).optional(),
    request_id: requestId,
  }),
  z.strictObject({
    type: z.literal("respond_action"),
    action_id: z.string().min(1),
    decision: z.enum(["approve", "reject"]),
    reason: z.string().max(1000).optional(),
    request_id: requestId,
  }),
  z.strictObject({ type: z.literal("interrupt"), reason: z.string().max(1000).optional(), request_id: requestId }),
  z.strictObject({ type: z.literal("inject_message"), content: MessageContent, request_id: requestId }),
]);
export type ClientFrame = z.infer<typeof ClientFrame>;

export interface TurnAccepted {
  turn_id: string;
  status: "accepted" | "queued";
}

/** What POST .../messages (and inject_message) answers: taken by the running turn, or a new turn. */
export type InjectResult =
  | { delivery: "injected"; turn_id: string; message_id: string }
  | { delivery: "new_turn"; turn_id: string; status: "accepted" | "queued" };

/** What a decision on a pending approval answers. */
export interface ActionResolved {
  action_id: string;
  turn_id: string;
  tool_call_id: string;
  decision: ApprovalDecision;
}
