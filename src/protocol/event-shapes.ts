// The shapes several events' payloads share (event-payloads.ts), named in docs/reference/events.md: usage, a
// turn's error, a tool's description and result metadata, a replay's comparison, a Responses request's record.
import { z } from "zod";
import { GUARDRAIL_STAGES } from "./guardrails";

export const Usage = z
  .object({
    input_tokens: z.number(),
    output_tokens: z.number(),
    total_tokens: z.number(),
    cached_input_tokens: z.number().optional().describe("input tokens read from the provider's prompt cache (part of input_tokens); absent when none"),
  })
  .meta({ id: "Usage" });
export const Phase = z.enum(["executor", "planner", "compaction"]);
/** Why a turn failed (turn.failed's `error.code`): a closed list, each code with what it means. */
export const TURN_ERROR_CODES = {
  model_error: "the model provider failed",
  output_invalid: "the final answer did not match output_schema, after the retries",
  budget_exceeded: "a budget limit was reached (budget.exceeded says which)",
  configuration_error: "the turn could not be set up with its agent's configuration",
  internal_error: "the runtime failed (runtime.error has the details), or could not record the turn's end",
  lost: "the turn cannot go on: its checkpoint is missing, or it was resumed too often without progress",
  guardrail_blocked: "a guardrail rule blocked the input or the answer (stage and rule say which)",
  quota_exceeded: "a quota with action refuse had no room for the turn or its next model call (quota_id says which)",
  quota_unavailable: "a quota with action refuse could not be checked (its object did not answer): quotas fail closed",
} as const;
export type TurnErrorCode = keyof typeof TURN_ERROR_CODES;

export const TurnError = z
  .object({
    code: z.enum(Object.keys(TURN_ERROR_CODES) as [TurnErrorCode, ...TurnErrorCode[]]).describe(
      Object.entries(TURN_ERROR_CODES)
        .map(([code, meaning]) => `${code}: ${meaning}`)
        .join("; "),
    ),
    message: z.string(),
    stage: z.enum(GUARDRAIL_STAGES).optional().describe("guardrail_blocked: the stage of the rule that blocked"),
    rule: z.string().optional().describe("guardrail_blocked: the rule that blocked"),
    quota_id: z.string().optional().describe("quota_exceeded, quota_unavailable: the quota"),
  })
  .meta({ id: "TurnError" });
/** Why the runtime could not submit a turn itself: the error POST .../turns would have answered. */
export const SubmitError = z
  .object({
    code: z.string().describe("the API error code (errors.md): rate_limited for a full queue, validation_failed for an input over the budget, ..."),
    message: z.string(),
  })
  .meta({ id: "SubmitError" });
export const Decision = z.enum(["approved", "rejected", "timed_out", "answered"]);

export const ToolDescription = z
  .object({
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    permission_class: z.string(),
    parallel_safe: z.boolean(),
    lock: z.string().nullable(),
    mcp: z.object({ server: z.string(), tool: z.string() }).optional(),
    code_tool: z.object({ version: z.int() }).optional().describe("set on a registered code tool: the version the turn runs (GET /v1/code-tools/{name})"),
  })
  .meta({ id: "ToolDescription" });

export const ResultMetadata = z.object({
  status: z.string().describe("success, error, rejected or timed_out"),
  started_at: z.number(),
  completed_at: z.number(),
  execution_time_ms: z.number(),
  approval_status: z.string().describe("not_required, approved, rejected or timed_out"),
  approval_id: z.string().nullable(),
  injected_args: z.record(z.string(), z.unknown()),
  offloaded_artifact_id: z.string().nullable(),
  args_edited_by: z.string().optional().describe("present when an approver edited the arguments: who (the call ran with the edited ones)"),
  receipt: z
    .object({
      idempotency_key: z.string().describe("the Idempotency-Key every attempt of the call carried"),
      status: z.number().nullable().describe("the last answer's HTTP status; null when no attempt got an answer"),
      attempts: z.number().describe("requests sent: the first and its retries"),
    })
    .optional()
    .describe("webhook tools: what became of the call"),
  script: z
    .object({
      clock: z.array(z.number()).describe("Date.now() and new Date()"),
      random: z.array(z.number()).describe("Math.random()"),
      perf: z.array(z.number()).optional().describe("performance.now()"),
      uuid: z.array(z.string()).optional().describe("crypto.randomUUID()"),
      bytes: z.array(z.string()).optional().describe("each crypto.getRandomValues() fill, as hex"),
    })
    .optional()
    .describe("run_code: the values the script's clock, random and crypto sources gave it, in order (a rerun and a replay get them again)"),
});

/**
 * The fields of a POST /v1/responses request a response echoes (docs/guides/open-responses.md), recorded on the
 * event that begins the response: its turn's submission, or the first decision that continues a paused turn.
 */
export const ResponsesRequestRecord = z
  .object({
    previous_response_id: z.string().nullable(),
    background: z.boolean(),
    metadata: z.record(z.string(), z.string()).optional(),
    max_output_tokens: z.number().optional().describe("on a turn's submission: the cap on each model call of the turn"),
  })
  .meta({ id: "ResponsesRequestRecord" });
export type ResponsesRequestRecord = z.infer<typeof ResponsesRequestRecord>;
export const responsesRequest = ResponsesRequestRecord.optional().describe("set when POST /v1/responses made it (the request's fields the response echoes)");

export const turnSummary = { usage: Usage.optional(), cost_usd: z.number().nullable().optional() };

export const Divergence = z
  .object({ step: z.number().describe("the model call of the turn (1-based, every phase counted) from which it ran live"), reason: z.string() })
  .meta({ id: "ReplayDivergence" });

export const ReplaySide = z
  .object({
    status: z.enum(["completed", "failed", "cancelled"]),
    stop_reason: z.string().nullable().describe("final_answer, max_steps, ... or the failure's code"),
    steps: z.number().describe("executor model calls"),
    tool_calls: z.array(z.object({ name: z.string(), args: z.unknown() })),
    output: z.unknown(),
    usage: Usage,
    cost_usd: z.number().nullable(),
  })
  .meta({ id: "ReplaySide" });

/** The idempotency key a replay session's replayed turn is submitted with (its turn.submitted shows it). */
export const REPLAY_TURN_KEY = "replay";

/** The result of a replay (GET /v1/replays/:exec_id and the replay session's last event). */
export const ReplayComparison = z
  .object({
    source_session: z.string(),
    source_turn_id: z.string(),
    turn_id: z.string().describe("the replay's own turn"),
    tools: z.enum(["recorded", "live"]),
    diverged: Divergence.nullable().describe("null: every model call was answered from the recording"),
    original: ReplaySide,
    replay: ReplaySide,
    output_changed: z.boolean(),
    tool_calls_changed: z.boolean().describe("names or arguments differ, or their order"),
    tokens_delta: z.number().describe("replay total tokens minus the original's"),
    cost_delta_usd: z.number().nullable().describe("null when either cost is unknown"),
  })
  .meta({ id: "ReplayComparison" });

/** Shapes several payloads share (named in docs/reference/events.md). */
export const SHARED_SHAPES = { Usage, TurnError, SubmitError, ToolDescription, ReplaySide, ReplayDivergence: Divergence, ResponsesRequestRecord };
