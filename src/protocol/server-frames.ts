// What the server sends on a session's WebSocket besides events (docs/reference/api.md): the reply to a command frame.
// docs/reference/websocket.md is generated from it.
import { z } from "zod";

const requestId = z.unknown().describe("the command frame's `request_id` as sent; null when it had none");

export const ReplyFrame = z.discriminatedUnion("ok", [
  z.object({ type: z.literal("reply"), request_id: requestId, ok: z.literal(true), result: z.unknown().describe("what the matching HTTP route answers") }),
  z.object({
    type: z.literal("reply"),
    request_id: requestId,
    ok: z.literal(false),
    error: z.object({ code: z.string(), message: z.string() }).describe("an error code (docs/reference/errors.md) and a sentence"),
  }),
]);
export type ReplyFrame = z.infer<typeof ReplyFrame>;
