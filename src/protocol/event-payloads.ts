// The payload of every event type (docs/reference/events.md, docs/guides/tools-and-permissions.md), one zod schema each: the emitters are type-checked against
// them, GET /v1/events/schema serves them as JSON Schema, and docs/reference/events.md is generated from them.
import { z } from "zod";
import {
  Decision,
  Divergence,
  Phase,
  ReplayComparison,
  ResultMetadata,
  responsesRequest,
  SubmitError,
  ToolDescription,
  TurnError,
  turnSummary,
  Usage,
} from "./event-shapes";
import { GUARDRAIL_STAGES } from "./guardrails";
import { FileRef } from "./input-parts";
import { MemoryLoadedSchema, MemoryRecalledSchema } from "./memory";
import { QuestionCancelSettled, QuestionDropped } from "./question-dropped";

export const EVENT_PAYLOADS = {
  "session.created": z.object({
    agent: z.string(),
    version: z.number().optional().describe("the version of the registered agent the session runs (absent: an inline agent)"),
    label: z.string().optional().describe("the label that chose the version (a traffic split's, or `name@label`)"),
    model: z.string(),
    policy: z.record(z.string(), z.unknown()),
    metadata: z.record(z.string(), z.unknown()),
    owner: z.string().nullable().optional().describe("who the session is for (a browser token's subject)"),
    resource_id: z.string().nullable().optional().describe("the resource whose memory the session uses (docs/guides/memory.md)"),
  }),
  "session.version_changed": z
    .object({ agent: z.string(), from_version: z.number().nullable(), to_version: z.number(), by: z.string().nullable() })
    .describe("POST /v1/sessions/{sid}/agent moved the session to another version of its agent: turns from now on run it"),
  "session.forked": z
    .object({ from_session: z.string(), at_sequence: z.number() })
    .describe("the first event of a fork: its conversation is from_session's as of at_sequence"),
  "turn.submitted": z.object({
    input: z.string().describe("the input's text (its text parts joined by blank lines)"),
    files: z.array(FileRef).optional().describe("the files of an input sent as parts: references, never the bytes"),
    queued: z.boolean(),
    idempotency_key: z.string().optional(),
    by: z.string().optional().describe("who submitted it (an API key's id, or tok_<subject>@<key id>); what a quota's key and subject scopes count"),
    message_id: z.string().optional().describe("set when a live message that arrived too late for its turn became this turn"),
    source: z
      .object({ kind: z.literal("schedule"), schedule_id: z.string() })
      .optional()
      .describe("set when the runtime submitted the turn itself (a due schedule)"),
    on_busy: z.string().optional().describe("with debounce_ms: the strategy it was submitted with (messages with the same one join it)"),
    debounce_ms: z.number().optional().describe("set when the turn waited this long for more messages before it started"),
    responses_request: responsesRequest,
  }),
  "turn.started": z.object({ agent: z.string(), model: z.string() }),
  "turn.completed": z.object({
    output: z.unknown().describe("text, or the JSON value with output_schema"),
    stop_reason: z.enum(["final_answer", "max_steps", "budget_limit"]),
    ...turnSummary,
  }),
  "turn.failed": z.object({
    error: TurnError,
    output: z.unknown().optional(),
    ...turnSummary,
  }),
  "turn.cancelled": z.object({
    reason: z.string(),
    by_turn_id: z.string().optional().describe('with reason "superseded": the turn submitted with on_busy "interrupt" that cancelled this one'),
  }),
  "turn.rolled_back": z
    .object({
      turn_id: z.string(),
      by_turn_id: z.string(),
      side_effects: z
        .array(z.object({ tool_call_id: z.string(), name: z.string(), completed: z.boolean() }))
        .describe("the tool calls the turn had started (completed: whether their result arrived): their effects are not undone"),
    })
    .describe(
      'follows the turn.cancelled {reason: "rolled_back"} of a turn cancelled by on_busy "rollback" or regenerate, or the new turn\'s turn.submitted when regenerate rolls back an ended turn: it leaves the conversation the model sees and the turns of the read model; its events stay in the log',
    ),
  "schedule.created": z.object({
    schedule_id: z.string(),
    input: z.string(),
    at: z.number().optional(),
    every_s: z.number().optional(),
    cron: z.string().optional(),
    timezone: z.string().optional(),
    next_run_at: z.number(),
  }),
  "schedule.fired": z.object({
    schedule_id: z.string(),
    due_at: z.number().describe("the run this is (runs missed meanwhile are not made up)"),
    turn_id: z.string().nullable().describe("the submitted turn; null when the submission was refused"),
    error: SubmitError.optional().describe("why the submission was refused (a full queue, an input over the budget)"),
    next_run_at: z.number().nullable().describe("null: the schedule is done and removed"),
  }),
  "schedule.deleted": z.object({ schedule_id: z.string() }),
  "queue.changed": z.object({ queued: z.array(z.string()).describe("turn ids in the order they will run") }),
  "run.status": z
    .looseObject({
      phase: z.string().describe("recovering, handoff, or an agent_orchestrate phase"),
      detail: z.string().optional(),
      attempt: z.number().optional(),
      from: z.string().optional(),
      to: z.string().optional(),
      to_version: z.number().optional().describe("handoff: the version of the agent handed to (its newest), which the session runs from then on"),
      reason: z.string().nullable().optional(),
      scope: z.literal("agent_orchestrate").optional(),
    })
    .describe("recovering {detail, attempt}; handoff {from, to, to_version, reason}; agent_orchestrate phases {scope, ...}"),
  "model.requested": z.object({
    model: z.string(),
    phase: Phase,
    step: z.number().optional().describe("executor calls: the step number"),
    request_hash: z
      .string()
      .optional()
      .describe("SHA-256 of the request (model, system prompt, messages, tool schemas, parameters); absent in logs recorded before it"),
    reservation: z
      .object({
        input_tokens: z.number().describe("the request's tokens, bounded by its size in UTF-8 bytes"),
        max_output_tokens: z.number().describe("the agent's max_tokens, else 4096 (DEFAULT_MAX_OUTPUT_TOKENS)"),
        cost_usd: z.number().nullable().describe("both at the prices of the dearest model of the fallback chain; null when one has no known price"),
      })
      .optional()
      .describe("the most the call may cost, recorded before it starts (what spend quotas reserve): what usage.lost records if a restart cuts the call"),
  }),
  "model.attached": z
    .object({
      provider: z.literal("openai"),
      response_id: z.string().describe("the provider's id of the call's response (a Responses API call made in background mode)"),
      reattached_from: z
        .string()
        .optional()
        .describe("the step of the call a restart cut: this call reads that call's response instead of sending the request again"),
    })
    .describe(
      "the provider named the model call's response, so a restart does not lose it: the call made again after the restart re-attaches to it, paid once",
    ),
  "model.delta": z.object({ text: z.string() }),
  "model.completed": z.object({
    usage: Usage,
    finish_reason: z.string().describe('"error" (with error) when the call failed; "interrupted" or "cancelled" when cut'),
    phase: Phase.optional(),
    error: z.object({ message: z.string() }).optional(),
    model: z.string().optional().describe("the model that answered, when it is not the requested one (a fallback)"),
  }),
  "model.fallback": z
    .object({
      from: z.string(),
      to: z.string(),
      reason: z.string().describe("the failed model's error after its retries, or its first-token timeout; for a skipped model, why"),
      skipped: z.literal(true).optional().describe("`from` was not tried: it failed earlier in the turn, or its circuit breaker is open"),
    })
    .describe("a model call failed over to the next of fallback_models, with the same request"),
  "reasoning.summary": z.object({ kind: z.literal("plan"), text: z.string() }),
  "tool.catalog.resolved": z.object({ tools: z.array(ToolDescription) }),
  "tool.started": z.object({ name: z.string(), args: z.unknown(), injected_args: z.record(z.string(), z.unknown()) }),
  "mcp.progress": z.object({ server: z.string(), tool: z.string(), progress: z.number(), total: z.number().nullable(), message: z.string().nullable() }),
  "tool.result": z.object({ name: z.string(), output: z.unknown(), is_error: z.boolean(), metadata: ResultMetadata }),
  "tool.result.late": z
    .object({
      turn_id: z.string(),
      tool_call_id: z.string(),
      name: z.string(),
      output: z.unknown().describe("as tool.result's: redacted by the tool_output redaction rules, a preview when spilled"),
      is_error: z.boolean(),
      metadata: ResultMetadata,
    })
    .describe(
      "the outcome of a non-idempotent tool call that was still running when its turn ended (cut by interrupt, on_busy or a budget): the call was closed in the turn, and it kept running; recorded after the turn's end, not part of the conversation the model sees",
    ),
  "action.required": z.object({
    kind: z.enum(["tool_approval", "user_input"]).describe("user_input: an ask_user call, a question the user answers"),
    tool_name: z.string(),
    args: z.unknown(),
    injected_args: z.record(z.string(), z.unknown()),
    expires_at: z.number(),
    question: z.string().optional().describe("user_input: the question"),
    response_schema: z.record(z.string(), z.unknown()).optional().describe("user_input: the JSON Schema the answer must match"),
    args_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("tool_approval: the tool's parameters, which edited args must match; absent when the tool forbids edits"),
    remind_after_ms: z.number().optional().describe("the hitl_tools entry's remind_after_ms: action.reminder this often while it waits"),
    approvals_required: z.number().optional().describe("tool_approval: distinct principals who must approve (absent: one)"),
    on_timeout: z.literal("approve").optional().describe("tool_approval: the deadline approves the call (absent: it is timed_out)"),
  }),
  "action.approval.recorded": z
    .object({
      tool_name: z.string(),
      by: z.string(),
      reason: z.string().nullable(),
      approvals: z.number().describe("approvals recorded so far, this one included"),
      approvals_required: z.number(),
    })
    .describe("one approver's approval of an action that needs several (approvals_required); action.resolved follows at the last"),
  "action.reminder": z
    .object({
      kind: z.enum(["tool_approval", "user_input"]),
      tool_name: z.string(),
      expires_at: z.number(),
      next_at: z.number().nullable().describe("the next reminder, or null when the deadline comes first"),
    })
    .describe("the action still waits (remind_after_ms after it was asked, and again each interval)"),
  "action.resolved": z.object({
    decision: Decision.describe("answered: a user_input action's answer (in response)"),
    tool_name: z.string(),
    by: z.string(),
    reason: z.string().nullable(),
    response: z.unknown().optional().describe("answered: the answer, valid against the action's response_schema"),
    args: z.record(z.string(), z.unknown()).optional().describe("approved with edits: the arguments the call runs with (action.required keeps the original)"),
    approved_by: z.array(z.string()).optional().describe("approved by a quorum: every approver, in order"),
    responses_request: responsesRequest,
  }),
  "subagent.spawned": z.object({ title: z.string(), depth: z.number(), index: z.number(), tools: z.array(z.string()) }),
  "subagent.completed": z.object({ result: z.unknown() }),
  "subagent.failed": z.object({ error: z.string() }),
  "budget.exceeded": z.object({
    reason: z.enum(["subtasks", "llm_calls", "tool_calls", "wall_clock", "tokens", "bytes", "depth", "cost"]),
    limit: z.number(),
    observed: z.number(),
  }),
  "turn.paused": z
    .object({
      reason: z.literal("quota"),
      quota_id: z.string(),
      message: z.string(),
      retry_at: z.number().nullable().describe("when the quota's window rolls over (ms since the epoch); null: when a running turn ends or the quota changes"),
    })
    .describe(
      "a quota with action pause has no room for the turn's next model call (or its start): the turn waits, its wall clock stopped, until turn.resumed",
    ),
  "turn.resumed": z
    .object({ reason: z.literal("quota"), quota_id: z.string(), continued_by: z.string().optional().describe("who let it go over the quota (turn.continued)") })
    .describe("the paused turn goes on: the quota was raised or deleted, its window rolled over, running turns ended, or it was continued"),
  "turn.continued": z
    .object({ reason: z.literal("quota"), quota_id: z.string(), by: z.string().describe("the admin key's id"), note: z.string().optional() })
    .describe(
      "a principal allowed to (POST .../continue) let the turn paused by the quota go on: its waiting call is made over that quota once (another quota that holds it pauses the turn again)",
    ),
  "eval.scored": z
    .object({
      turn_id: z.string(),
      scorer: z.string(),
      score: z.number(),
      pass: z.boolean(),
      reason: z.string(),
      sample_rate: z.number(),
      version: z.number().nullable().describe("the agent version the turn ran"),
      cost_usd: z.number().nullable().optional().describe("a judge's call"),
    })
    .describe("an online scorer of the agent (online_scorers) scored an ended turn it sampled; a session-level event"),
  "quota.warning": z
    .object({
      quota_id: z.string(),
      subject: z.string().describe("whom the quota counts: the key id, end user, resource or agent; empty for the deployment"),
      threshold: z.number().describe("the warn_at fraction crossed"),
      dimension: z.enum(["usd", "input_tokens", "output_tokens", "turns", "concurrent_turns"]),
      used: z.number(),
      limit: z.number(),
      turn_id: z.string().describe("the turn whose model call crossed it"),
    })
    .describe("a quota's soft threshold was crossed in its window (once per window and threshold); a session-level event"),
  "context.compaction.started": z.object({ before_tokens: z.number(), limit_tokens: z.number(), method: z.literal("trim").optional() }),
  "context.compaction.completed": z.object({
    before_tokens: z.number(),
    after_tokens: z.number(),
    method: z.literal("trim").optional().describe("trim: the oldest turns were dropped; absent: they were summarized"),
    dropped_messages: z.number().optional(),
  }),
  "output.spilled": z.object({ artifact_id: z.string(), bytes: z.number(), name: z.string().describe("the tool") }),
  "artifact.created": z.object({
    file_id: z.string().describe("a session file (GET /v1/sessions/:sid/files/:file_id)"),
    media_type: z.string(),
    size: z.number().int(),
    filename: z.string().nullable(),
    tool_call_id: z.string().describe("the call whose result returned it"),
  }),
  "message.injected": z.object({
    message_id: z.string(),
    content: z.string(),
    files: z.array(FileRef).optional().describe("files sent with the message: references, never the bytes"),
  }),
  "usage.lost": z
    .object({
      model: z.string(),
      phase: Phase,
      request_hash: z.string(),
      usage: Usage.describe("the reservation: input tokens estimated, output tokens the most the call could write"),
      cost_usd: z.number().nullable().describe("the reservation's cost; null when the model's price is not known"),
      estimate: z.literal(true).describe("always true: the provider's bill for the call was never seen"),
      retrieval_status: z
        .number()
        .optional()
        .describe("a call that had named its response (model.attached) whose response could not be read again: the provider's HTTP status"),
    })
    .describe(
      "a model call cut by a restart (the session object died while it was under way), recorded at the recovery before the call is made again: the provider may have billed it, so its reservation counts in the turn's usage and budget and in /v1/usage",
    ),
  "cost.recorded": z.object({
    model: z.string().describe("the model that answered (a fallback's when one did)"),
    phase: z.enum([...Phase.options, "guardrail"]).describe("guardrail: a model rule's judge call (it has no model.requested)"),
    usage: Usage,
    cost_usd: z.number().nullable().describe("cached input tokens at the model's cached-input price"),
  }),
  "guardrail.checked": z
    .object({
      stage: z.enum(GUARDRAIL_STAGES),
      rule: z.string().describe("the rule's name, or <stage>.<index>"),
      kind: z.enum(["regex", "pii", "max_length", "model", "webhook"]),
      verdict: z.enum(["pass", "block", "redact", "warn"]).describe("pass, or the rule's action when it fired"),
      reason: z.string().optional().describe("why it fired: what matched (never the matched text), the judge's or webhook's reason"),
      failed: z
        .enum(["timeout", "error"])
        .optional()
        .describe("a webhook or judge that gave no answer, or a regex redaction past its bound (the whole text): the rule fires (fails closed)"),
      message_id: z.string().optional().describe("input stage: the live message checked (absent: the turn's input)"),
    })
    .describe("one rule's verdict on one text; tool stages carry the tool call's id"),
  "memory.updated": z
    .object({
      resource_id: z.string(),
      agent: z.string().nullable().describe("the agent of an agent-scoped document; null for the resource's own"),
      version: z.int().describe("the document's version after the change"),
      patch: z.unknown().describe("the JSON merge patch (RFC 7396) applied"),
    })
    .describe("update_working_memory changed the resource's working memory (docs/guides/memory.md); carries the tool call's id"),
  "memory.loaded": MemoryLoadedSchema,
  "memory.recalled": MemoryRecalledSchema,
  "runtime.warning": z.object({
    message: z.string(),
    code: z
      .string()
      .optional()
      .describe(
        "mcp_server_unavailable, mcp_tool_not_found, mcp_tool_left_out, code_tool_not_found, code_tool_unavailable, working_memory_unavailable, recall_unavailable",
      ),
    server: z.string().optional(),
    errors: z.array(z.string()).optional(),
    attempt: z.number().optional(),
  }),
  "runtime.error": z.object({ message: z.string(), where: z.string() }),
  "question.dropped": QuestionDropped,
  "question.cancel_settled": QuestionCancelSettled,
  "replay.diverged": Divergence.describe(
    "a replayed turn leaves its recording: this model call's request differs from the recorded one (or the recording has no more), and it and every later call go to the live model",
  ),
  "replay.completed": ReplayComparison.describe("the last event of a replay session, without a turn_id: the replayed turn against the original"),
} as const;
