// WebSocket command frames (docs/reference/api.md): parse and validate a client frame, run it against the session, and
// answer with a reply frame carrying its request_id. Malformed frames get ok:false; the socket stays open.

import { ApiError, type Result, zodIssues } from "../../protocol/errors";
import { deepField, MAX_JSON_DEPTH } from "../../protocol/json-nesting";
import type { ReplyFrame } from "../../protocol/server-frames";
import type { OpInput } from "../../protocol/session-operations";
import { ClientFrame } from "../../protocol/wire";
import type { ChannelStore } from "./channel-store";
import type { SocketHub } from "./socket-hub";

/** What the frames can do to a session: its operations, plus acks for the socket's channel. */
export interface FrameTarget {
  call<N extends FrameOperation>(name: N, input: OpInput<N>): Promise<Result<unknown>>;
  /** Stores the socket's channel cursor; an error when the socket has no channel. */
  ack(ws: WebSocket, sequence: number): Result<{ channel: string; acked_sequence: number | null }>;
  /** Who opened the socket (a hash of its key), recorded on its decisions. */
  keyHash(ws: WebSocket): string;
  /** What the socket's key or token may do with frames (null: everything). */
  grants(ws: WebSocket): string[] | null;
  /** Whether the socket's frames are served at all (false once its token expired: the socket is closed). */
  admits(ws: WebSocket): boolean;
}

/** The frames' target for a session: its operations, and the socket's attachment and channel cursor. */
export function sessionFrames(rpc: Pick<FrameTarget, "call">, hub: SocketHub, channels: () => ChannelStore, lastSequence: () => number): FrameTarget {
  return {
    call: (name, input) => rpc.call(name, input),
    keyHash: (ws) => hub.attachment(ws).key_hash,
    grants: (ws) => hub.attachment(ws).grants ?? null,
    admits: (ws) => hub.admits(ws),
    ack: (ws, sequence) => {
      const { channel } = hub.attachment(ws);
      if (!channel) return { ok: false, error: new ApiError("validation_failed", "ack needs a socket opened with ?channel=<id>").toBody().error };
      const acked = Math.min(sequence, lastSequence());
      channels().ack(channel, acked, Date.now());
      hub.acked(ws, acked);
      return { ok: true, value: { channel, acked_sequence: channels().cursor(channel) } };
    },
  };
}

/** The operation each command frame is (its fields are that operation's body, and `action_id` its path's). */
const OPERATION_OF = { submit_turn: "submitTurn", interrupt: "interrupt", respond_action: "resolveAction", inject_message: "injectMessage" } as const;
type FrameOperation = (typeof OPERATION_OF)[keyof typeof OPERATION_OF];

/** The grant each command frame needs (acks need none). */
const GRANT_OF: Partial<Record<ClientFrame["type"], string>> = {
  submit_turn: "submit",
  inject_message: "submit",
  interrupt: "interrupt",
  respond_action: "approve",
};

export async function handleFrame(target: FrameTarget, ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
  if (!target.admits(ws)) return;
  const text = typeof message === "string" ? message : new TextDecoder().decode(message);
  // The bound HTTP bodies have, read from the text before it is parsed: a frame 50,000 levels deep would
  // otherwise overflow the stack in the validation below (an internal_error, for every such frame).
  const deep = deepField(text);
  if (deep !== null) {
    return reply(ws, null, { ok: false, error: ApiError.validation([{ path: deep, reason: `nests deeper than ${MAX_JSON_DEPTH} levels` }]).toBody().error });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return reply(ws, null, { ok: false, error: { code: "malformed_body", message: "Frame is not valid JSON" } });
  }
  const requestId = raw && typeof raw === "object" && "request_id" in raw ? (raw as { request_id: unknown }).request_id : null;
  const parsed = ClientFrame.safeParse(raw);
  if (!parsed.success) {
    return reply(ws, requestId, { ok: false, error: ApiError.validation(zodIssues(parsed.error.issues)).toBody().error });
  }
  const frame = parsed.data;
  const needed = GRANT_OF[frame.type];
  const grants = target.grants(ws);
  if (needed && grants && !grants.includes(needed)) {
    return reply(ws, frame.request_id, { ok: false, error: { code: "forbidden", message: `This socket's key or token may not ${needed}` } });
  }
  if (frame.type === "ack") {
    const result = target.ack(ws, frame.sequence);
    // Acks are fire-and-forget; a client that wants confirmation sends a request_id and gets the stored cursor.
    if (!result.ok || frame.request_id !== undefined) reply(ws, frame.request_id, result);
    return;
  }
  const { type, request_id, ...fields } = frame;
  const { action_id, ...body } = fields as Record<string, unknown>;
  const params = typeof action_id === "string" ? { action_id } : {};
  const op = OPERATION_OF[type];
  // ClientFrame validated the fields as that operation's body (wire.ts builds each frame from its body's schema).
  reply(ws, request_id, await target.call(op, { params, body, by: target.keyHash(ws) } as OpInput<typeof op>));
}

export function reply(ws: WebSocket, requestId: unknown, result: Result<unknown>): void {
  const frame: ReplyFrame = result.ok
    ? { type: "reply", request_id: requestId ?? null, ok: true, result: result.value }
    : { type: "reply", request_id: requestId ?? null, ok: false, error: { code: result.error.code, message: result.error.message } };
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // the socket closed before the reply
  }
}
