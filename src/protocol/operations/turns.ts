// Turns of a session (docs/reference/api.md): submit, regenerate, interrupt, inject, approvals, the queue, execution trees, and replays.
import { z } from "zod";
import { ReplayComparison } from "../event-shapes";
import type { FileRef } from "../input-parts";
import { TreeNodeSchema } from "../views";
import {
  ActionDecisionBody,
  ActionResolved,
  InjectMessageBody,
  InjectResult,
  InterruptBody,
  InterruptResult,
  QueueResult,
  SubmitTurnBody,
  TurnSubmitted,
} from "../wire";
import { answers, json, jsonBody, operation, Sid, sidWith } from "./operation";
import type { SourceConfig } from "./sessions";

const SidTurn = sidWith("turn_id");

export const submitTurn = operation({
  method: "post",
  path: "/v1/sessions/{sid}/turns",
  operationId: "submitTurn",
  summary: "Submit a turn; it starts now or is queued behind the running one",
  permission: "session.submit",
  rateLimit: "turn",
  params: Sid,
  body: jsonBody(SubmitTurnBody),
  responses: { 202: json(TurnSubmitted, "Accepted") },
  errors: [404, 409, 422],
  session: true,
});

export const interrupt = operation({
  method: "post",
  path: "/v1/sessions/{sid}/interrupt",
  operationId: "interrupt",
  summary: "Cancel the running turn (no-op when idle)",
  permission: "session.interrupt",
  rateLimit: "request",
  params: Sid,
  body: jsonBody(InterruptBody, false),
  responses: { 200: json(InterruptResult, "Done") },
  errors: [404, 422],
  session: true,
});

export const injectMessage = operation({
  method: "post",
  path: "/v1/sessions/{sid}/messages",
  operationId: "injectMessage",
  summary: "Inject a user message into the running turn (taken before its next model call); with no running turn it becomes a new turn",
  permission: "session.submit",
  rateLimit: "turn",
  params: Sid,
  body: jsonBody(InjectMessageBody),
  responses: { 202: json(InjectResult, "Accepted") },
  errors: [404, 422],
  session: true,
});

export const resolveAction = operation({
  method: "post",
  path: "/v1/sessions/{sid}/actions/{action_id}",
  operationId: "resolveAction",
  summary: "Approve or reject a pending tool call",
  permission: "session.approve",
  rateLimit: "request",
  params: sidWith("action_id"),
  body: jsonBody(ActionDecisionBody),
  responses: { 200: json(ActionResolved, "Resolved") },
  errors: [404, 409, 422],
  session: true,
});

export const removeQueuedTurn = operation({
  method: "delete",
  path: "/v1/sessions/{sid}/queue/{turn_id}",
  operationId: "removeQueuedTurn",
  summary: "Remove a queued turn (it ends turn.cancelled)",
  permission: "session.queue",
  rateLimit: "request",
  params: SidTurn,
  responses: { 200: json(QueueResult, "The queue after removal") },
  errors: [404, 409],
  session: true,
});

export const promoteQueuedTurn = operation({
  method: "post",
  path: "/v1/sessions/{sid}/queue/{turn_id}/promote",
  operationId: "promoteQueuedTurn",
  summary: "Move a queued turn to the front of the queue",
  permission: "session.queue",
  rateLimit: "request",
  params: SidTurn,
  responses: { 200: json(QueueResult, "The queue after promotion") },
  errors: [404, 409],
  session: true,
});

export const RegenerateBody = z
  .strictObject({
    idempotency_key: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: "The new turn's key: a retry with it answers the turn it started instead of regenerating again" }),
  })
  .meta({ id: "RegenerateTurn" });
export type RegenerateBody = z.infer<typeof RegenerateBody>;

export const TurnRegenerated = z
  .object({
    turn_id: z.string().meta({ description: "The new turn, with the rolled-back turn's input and files" }),
    status: z.literal("accepted"),
    rolled_back_turn_id: z.string(),
    duplicate: z.boolean().optional(),
  })
  .meta({ id: "TurnRegenerated" });
export type TurnRegenerated = z.infer<typeof TurnRegenerated>;

export const regenerateTurn = operation({
  method: "post",
  path: "/v1/sessions/{sid}/turns/{turn_id}/regenerate",
  operationId: "regenerateTurn",
  summary: "Answer the session's last turn again: it is rolled back (running or ended; turn.rolled_back) and a new turn with the same input and files starts",
  permission: "session.submit",
  rateLimit: "turn",
  params: SidTurn,
  body: jsonBody(RegenerateBody, false),
  responses: { 202: json(TurnRegenerated, "Accepted") },
  errors: [404, 409, 422],
  session: true,
});

export const ExecutionTree = z.object({ version: z.literal(1), nodes: z.array(TreeNodeSchema) });

export const getExecutionTree = operation({
  method: "get",
  path: "/v1/sessions/{sid}/turns/{turn_id}/tree",
  operationId: "getExecutionTree",
  summary: "The turn's execution tree: its tool calls, sub-agent calls containing the calls made inside them",
  permission: "session.read",
  rateLimit: "request",
  params: SidTurn,
  responses: { 200: json(ExecutionTree, "Execution tree") },
  errors: [404],
  session: true,
});

export const ReplayBody = z
  .strictObject({
    agent: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "AgentConfig fields that replace the recorded agent's (top-level fields, whole); name stays" }),
    tools: z.enum(["recorded", "live"]).optional().meta({
      description:
        "recorded (default): a call with the recorded name and arguments gets the recorded result; live: it runs again (each approval asked again), which needs session.replay_live",
    }),
  })
  .meta({ id: "ReplayTurn" });

export const ReplayStarted = z.object({
  exec_id: z.string(),
  turn_id: z.string(),
  source_session: z.string(),
  source_turn_id: z.string(),
  at_sequence: z.int(),
});

/** The recorded turn a replay starts from, read from the source's log. */
export type RecordedTurnSource = {
  /** The sequence just before the turn started: every earlier turn had ended there. */
  at_sequence: number;
  input: string;
  /** The files the turn was submitted with. */
  files?: FileRef[];
  messages_json: string;
  /**
   * JSON {calls, cut, results, recalled, working, decisions}: the completed model calls, why the turn ended early (or null),
   * the tool results, the automatic recall, the working memory shown, the human decisions.
   */
  recording_json: string;
  /** JSON: the turn's side of the comparison. */
  original_json: string;
};

/** What the source session's replayTurn answers (its route, and an eval run of recorded turns): the turn and the source's config. */
export type ReplaySource = RecordedTurnSource & SourceConfig;

export const replayTurn = operation({
  method: "post",
  path: "/v1/sessions/{sid}/turns/{turn_id}/replay",
  operationId: "replayTurn",
  summary: "Run a recorded turn again in a new session, with a changed config",
  permission: "sessions.create",
  rateLimit: "request",
  params: SidTurn,
  body: jsonBody(ReplayBody, false),
  responses: { 201: json(ReplayStarted, "The replay session exists and its turn runs") },
  errors: [404, 409, 422],
  session: true,
  custom: true,
  answers: answers<ReplaySource>(),
});

export const Replay = z
  .object({
    exec_id: z.string(),
    source_session: z.string(),
    source_turn_id: z.string(),
    status: z.enum(["running", "completed"]),
    comparison: ReplayComparison.nullable().meta({ description: "null while the replay runs" }),
  })
  .meta({ id: "Replay" });

export const getReplay = operation({
  method: "get",
  path: "/v1/replays/{exec_id}",
  operationId: "getReplay",
  summary: "A replay's comparison with the original turn (null while it runs)",
  permission: "session.read",
  rateLimit: "request",
  params: z.object({ exec_id: z.string() }),
  responses: { 200: json(Replay, "The replay") },
  errors: [404],
  session: true,
});

export const ContinueTurnBody = z
  .strictObject({ note: z.string().max(500).optional().meta({ description: "Why the turn may go over its quota, recorded on turn.continued" }) })
  .meta({ id: "ContinueTurn" });

export const TurnContinued = z
  .object({
    turn_id: z.string(),
    quota_id: z.string().meta({ description: "The quota the turn was paused by (its last turn.paused), which its waiting call goes over once" }),
  })
  .meta({ id: "TurnContinued" });

export const continueTurn = operation({
  method: "post",
  path: "/v1/sessions/{sid}/turns/{turn_id}/continue",
  operationId: "continueTurn",
  summary:
    "Let a turn paused by a pause quota go on: its waiting model call (or start) goes over that quota once (turn.continued names who let it); another quota that also holds it pauses the turn again, for a continue of its own; admin keys only, like raising the quota",
  permission: "quotas.write",
  rateLimit: "request",
  params: SidTurn,
  body: jsonBody(ContinueTurnBody, false),
  responses: { 200: json(TurnContinued, "Recorded; the turn goes on") },
  errors: [404, 409, 422],
  session: true,
});
