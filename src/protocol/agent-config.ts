// The agent configuration (docs/reference/configuration.md): one zod schema for validation and defaults. The checks that need the
// deployment (configured providers, known tools, the URL allowlist) are in deployment-checks.ts.

import { z } from "zod";
import { BUDGET_MAXIMA } from "./budget-maxima";
import { OnBusy } from "./busy";
import { MAX_CPU_MS } from "./code-tools";
import { ScorerSchema } from "./evals";
import { GuardrailsSchema } from "./guardrails";
import { MemoryConfigSchema } from "./memory";
import { modelSpecField } from "./model-spec";
import { outboundUrl } from "./outbound-url";
import { refineSchemaPatterns } from "./safe-regex";
import { SubscriptionSpec, signingSecret, WRITE_ONLY } from "./subscriptions";
import { PERMISSION_CLASSES } from "./tool-classes";

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const nameField = z.string().regex(NAME, "must match ^[A-Za-z0-9_-]{1,64}$");

const URL_DOC = 'the values of query parameters named like a credential (key, token, secret, passw, auth, sig, credential) read as "[redacted]"';

const jsonSchemaObject = z
  .record(z.string(), z.unknown())
  .refine((s) => s.type === undefined || s.type === "object", { message: 'must be a JSON Schema with type "object"' })
  .superRefine(refineSchemaPatterns);

export const HttpToolSchema = z.strictObject({
  name: nameField,
  description: z.string().max(4000).default(""),
  parameters: jsonSchemaObject.default({ type: "object", properties: {} }),
  url: outboundUrl().describe(URL_DOC),
  permission_class: z.enum(PERMISSION_CLASSES).default("network"),
  parallel_safe: z.boolean().default(true),
  timeout_ms: z.int().min(1).max(120_000).default(10_000),
  idempotent: z
    .boolean()
    .optional()
    .describe("the receiver deduplicates by Idempotency-Key: a call a restart cut is sent again under the same key (default false: its outcome is unknown)"),
  secret: signingSecret.optional().describe(`signs each call per Standard Webhooks (webhook-id is the Idempotency-Key); ${WRITE_ONLY}`),
  previous_secret: signingSecret
    .optional()
    .describe(`during a rotation, the secret being replaced: it signs too (two signatures) until removed; ${WRITE_ONLY}`),
  /** Calls of tools holding the same lock never overlap. */
  lock: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, "must be 1-64 characters of A-Z a-z 0-9 _ . : -")
    .optional(),
});
export type HttpToolSpec = z.infer<typeof HttpToolSchema>;

const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * The per-turn limits (docs/guides/subagents-and-budgets.md); an agent's `budget` may lower them, and raise the model calls, tool calls and
 * wall clock up to the deployment's maximum (budget-maxima.ts).
 */
export const BUDGET_CAPS = {
  max_depth: 3,
  max_iterations_per_level: 20,
  max_parallel_per_turn: 8,
  max_total_subtasks: 32,
  max_total_llm_calls: 60,
  max_total_tool_calls: 200,
  max_wall_clock_ms: 180_000,
  max_tool_result_bytes: 50_000,
  max_history_tokens: 128_000,
} as const;
/** The deployment's cap on `budget.max_cost_usd` (USD per turn). */
export const MAX_COST_USD_CAP = 1000;
export type TurnBudget = { -readonly [K in keyof typeof BUDGET_CAPS]: number } & { max_cost_usd?: number };

/** Bytes a tool payload may take in the log and the conversation before it is spilled or left out. */
export function toolPayloadLimit(config: Pick<AgentConfig, "budget">): number {
  return config.budget.max_tool_result_bytes ?? BUDGET_CAPS.max_tool_result_bytes;
}

const budgetField = (cap: number, min = 1) => z.int().min(min).max(cap, `must be at most the deployment cap ${cap}`).optional();
/** A raisable limit: the schema holds the var's ceiling; the deployment's own maximum is checked when the agent is saved. */
const raisableField = ({ ceiling, setting }: { ceiling: number; setting: string }, min = 1) =>
  z.int().min(min).max(ceiling, `must be at most ${ceiling}, the ceiling of ${setting}`).optional();

export const BudgetSchema = z.strictObject({
  max_depth: budgetField(BUDGET_CAPS.max_depth, 0),
  max_iterations_per_level: budgetField(BUDGET_CAPS.max_iterations_per_level),
  max_parallel_per_turn: budgetField(BUDGET_CAPS.max_parallel_per_turn),
  max_total_subtasks: budgetField(BUDGET_CAPS.max_total_subtasks, 0),
  max_total_llm_calls: raisableField(BUDGET_MAXIMA.max_total_llm_calls),
  max_total_tool_calls: raisableField(BUDGET_MAXIMA.max_total_tool_calls, 0),
  max_wall_clock_ms: raisableField(BUDGET_MAXIMA.max_wall_clock_ms),
  max_tool_result_bytes: budgetField(BUDGET_CAPS.max_tool_result_bytes),
  max_history_tokens: budgetField(BUDGET_CAPS.max_history_tokens),
  /** USD a turn may spend over its whole sub-agent tree (the model needs a known price). */
  max_cost_usd: z.number().positive().max(MAX_COST_USD_CAP, `must be at most the deployment cap ${MAX_COST_USD_CAP}`).optional(),
});

export const McpServerSchema = z.strictObject({
  name: nameField,
  url: outboundUrl().describe(URL_DOC),
  headers: z.record(z.string(), z.string()).optional().describe('write-only: every value reads as "[redacted]"'),
  /** The class of the server's tools; a tool's annotations may raise it (destructiveHint) or, when trusted, lower it (readOnlyHint). */
  permission_class: z.enum(PERMISSION_CLASSES).default("network"),
  /** Whether the server's readOnlyHint annotations are believed (making those tools `safe`). */
  trusted: z.boolean().default(false),
});
export type McpServerSpec = z.infer<typeof McpServerSchema>;

/** A remote A2A agent the agent calls as a tool (docs/guides/a2a.md): its JSON-RPC URL or its Agent Card's. */
export const A2aAgentSchema = z.strictObject({
  name: nameField.describe("the tool's name"),
  url: outboundUrl().describe(
    `the agent's A2A JSON-RPC endpoint, or its Agent Card (a URL ending in /.well-known/agent-card.json, read at each call); ${URL_DOC}`,
  ),
  description: z.string().max(4000).default("").describe("what the model is told the remote agent does (absent: a generic text)"),
  headers: z.record(z.string(), z.string()).optional().describe('sent with every request, e.g. authorization; write-only: every value reads as "[redacted]"'),
  permission_class: z.enum(PERMISSION_CLASSES).default("network"),
  timeout_ms: z.int().min(1000).max(600_000).default(120_000).describe("how long a call waits for the remote task to settle; then it is cancelled there"),
});
export type A2aAgentSpec = z.infer<typeof A2aAgentSchema>;

const BUDGET_AWARENESS = /^(per-message|limit:(\d{1,3}))$/;

/** A hitl_tools entry with options (a bare name takes the defaults). */
const HitlToolSchema = z
  .strictObject({
    name: z.string().min(1),
    /** Whether an approver may change the call's arguments when approving it. */
    allow_edits: z.boolean().default(true),
    /** While a call waits, an action.reminder this often (subscriptions deliver it, so a webhook can page someone). */
    remind_after_ms: z
      .int()
      .min(1000)
      .max(7 * 24 * 3600 * 1000)
      .optional(),
    /** Distinct principals who must approve a call before it runs (default 1); any rejection rejects it. */
    approvals: z.int().min(1).max(10).optional(),
    /** This tool's deadline, instead of the agent's approval_timeout_ms. */
    timeout_ms: z
      .int()
      .min(1000)
      .max(7 * 24 * 3600 * 1000)
      .optional(),
    /** What the deadline does to a call nobody decided: reject it (timed_out, the default) or approve it. */
    on_timeout: z.enum(["reject", "approve"]).optional(),
  })
  .superRefine((rule, ctx) => {
    // A question has an answer or none: nobody can approve one, alone or together.
    if (rule.name !== "ask_user") return;
    if ((rule.approvals ?? 1) > 1) ctx.addIssue({ code: "custom", path: ["approvals"], message: "ask_user takes one answer; a quorum is for tool approvals" });
    if (rule.on_timeout === "approve") ctx.addIssue({ code: "custom", path: ["on_timeout"], message: "an unanswered question cannot be approved" });
  });

/** One run of a code-mode script: the defaults of `code_mode: true`, and the most an agent may set. */
export const SCRIPT_LIMITS = { timeout_ms: 60_000, cpu_ms: 5_000 } as const;
const MAX_SCRIPT_TIMEOUT_MS = 600_000;

const CodeModeLimits = z.strictObject({
  timeout_ms: z
    .int()
    .min(1000)
    .max(MAX_SCRIPT_TIMEOUT_MS)
    .default(SCRIPT_LIMITS.timeout_ms)
    .describe("wall time of one run of a script, its inner calls included"),
  cpu_ms: z.int().min(1).max(MAX_CPU_MS).default(SCRIPT_LIMITS.cpu_ms).describe("CPU time of one run (enforced by Cloudflare; local workerd enforces none)"),
});
export type CodeModeLimits = z.infer<typeof CodeModeLimits>;

export const AgentConfigSchema = z.strictObject({
  name: nameField,
  model: modelSpecField.default("openai:gpt-4o"),
  /** Tried in order when a call to `model` fails with a retryable error or a first-token timeout (docs/guides/model-fallback.md). */
  fallback_models: z.array(modelSpecField).max(4, "at most 4 fallback models").default([]),
  /** A model that sends nothing for this long is given up for the next model. */
  first_token_timeout_ms: z.int().min(100).max(600_000).nullable().default(null),
  /** Bounds one model call as a whole, fallbacks included; past it the call fails. */
  model_timeout_ms: z.int().min(100).max(600_000).nullable().default(null),
  /** How long a model that failed over is skipped by later turns (engine/model-breaker.ts). */
  fallback_cooldown_ms: z.int().min(0).max(3_600_000).default(60_000),
  instructions: z.string().max(200_000).default(""),
  tools: z.array(z.string().min(1)).max(128).default([]),
  http_tools: z.array(HttpToolSchema).max(64).default([]),
  mcp_servers: z.array(McpServerSchema).max(16).default([]),
  a2a_agents: z
    .array(A2aAgentSchema)
    .max(16)
    .optional()
    .describe("Remote A2A agents, each a tool of this agent that sends it a message and returns its task (docs/guides/a2a.md)"),
  handoffs: z.array(nameField).max(16).default([]),
  output_schema: z
    .record(z.string(), z.unknown())
    .refine((s) => s.type === "object", { message: 'must be a JSON Schema whose root has type "object"' })
    .superRefine(refineSchemaPatterns)
    .nullable()
    .default(null),
  max_steps: z.int().min(1, "must be at least 1").max(1000).default(10),
  temperature: z.number().min(0).max(2).default(1.0),
  max_tokens: z.int().min(1).nullable().default(null),
  planning_enabled: z.boolean().default(false),
  planning_model: modelSpecField.nullable().default(null),
  planning_instructions: z.string().max(200_000).default(""),
  budget_awareness: z
    .string()
    .refine((s) => BUDGET_AWARENESS.test(s) && (!s.startsWith("limit:") || Number(s.slice(6)) <= 100), {
      message: 'must be exactly "per-message" or "limit:<0-100>"',
    })
    .nullable()
    .default(null),
  /** Overrides the known context window of the model (tokens), for budget awareness. */
  context_window: z.int().min(1024).max(10_000_000).nullable().default(null),
  hitl_tools: z
    .array(z.union([z.string().min(1), HitlToolSchema]))
    .max(128)
    .default([]),
  /** How long a tool call waits for a human decision before it is resolved as timed_out. */
  approval_timeout_ms: z
    .int()
    .min(1000)
    .max(7 * 24 * 3600 * 1000)
    .default(15 * 60 * 1000),
  emit_mcp_progress: z.boolean().default(true),
  injected_tool_args: z
    .record(z.string().regex(PROPERTY_NAME, "must be a valid JSON property name (letters, digits, _ and -)"), z.string().max(1000))
    .refine((r) => Object.keys(r).length <= 16, { message: "at most 16 injected args" })
    .default({}),
  allow_parallel_subagents: z.boolean().default(false),
  code_mode: z
    .union([z.boolean(), CodeModeLimits])
    .optional()
    .describe(
      "true, or the limits of one run of a script: the model also gets run_code, a script in a sandbox calling the agent's other tools (docs/guides/code-mode.md)",
    ),
  max_parallel_subagents: z.int().min(1, "must be between 1 and 7").max(7, "must be between 1 and 7").default(3),
  budget: BudgetSchema.default({}),
  /** Outbound subscriptions every session of this agent gets, delivering its whole log (docs/guides/schedules-and-subscriptions.md). */
  subscriptions: z.array(SubscriptionSpec).max(5).optional(),
  online_scorers: z
    .array(z.strictObject({ scorer: ScorerSchema, sample_rate: z.number().min(0).max(1).describe("the share of ended turns scored (1: every one)") }))
    .max(10)
    .optional()
    .describe("Scorers of live turns: a sample of ended turns is scored off the turn's path, each score an eval.scored event (docs/guides/evals.md)."),
  guardrails: GuardrailsSchema.optional().describe("Checks of the input, the final answer and tool payloads (docs/guides/guardrails.md)."),
  memory: MemoryConfigSchema.optional().describe("Memory across the sessions of a resource (docs/guides/memory.md)."),
  on_busy: OnBusy.optional().describe("What a turn submitted while another runs does when its request does not say (absent: enqueue)"),
  chat_on_busy: OnBusy.optional().describe("The same for POST /v1/chat (useChat); absent: on_busy"),
  output_mode: z
    .enum(["streamed", "buffered"])
    .optional()
    .describe("streamed (absent): text reaches clients as the model writes it; buffered: only once the output guardrails passed the final answer"),
});
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
export type HitlTool = z.infer<typeof HitlToolSchema>;

/** A hitl_tools entry with its defaults: a bare name is a tool whose calls wait for one decision, editable. */
export function hitlRules(entries: AgentConfig["hitl_tools"]): HitlTool[] {
  return entries.map((e) => (typeof e === "string" ? { name: e, allow_edits: true } : e));
}
export type AgentConfigInput = z.input<typeof AgentConfigSchema>;
