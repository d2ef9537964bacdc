// docs/reference/configuration.md, generated from the agent config schema (src/protocol/agent-config.ts):
// types, defaults and limits come from its JSON Schema; the meaning of a field from its `.describe()` or,
// for fields without one, from FIELD_NOTES below. A field with neither makes generation fail.
import { z } from "zod";
import { AgentConfigSchema, BUDGET_CAPS, MAX_COST_USD_CAP } from "../protocol/agent-config";
import { BUDGET_MAXIMA, type RaisableLimit } from "../protocol/budget-maxima";
import { cell, generatedNote, type JsonSchema } from "../protocol/schema-markdown";

/** Where each object of the config is documented: its section title and anchor. */
const SECTIONS = {
  agent: "Agent",
  http_tools: "HTTP tool",
  mcp_servers: "MCP server",
  a2a_agents: "A2A agent",
  budget: "Budget",
  subscriptions: "Subscription",
} as const;
type Section = keyof typeof SECTIONS;

const FIELD_NOTES: Record<Section, Record<string, string>> = {
  agent: {
    name: "The agent's name; a body name other than the path's (`PUT /v1/agents/:name`) is 422.",
    model:
      "`provider:model`, provider one of `openai`, `anthropic`, `openai-compatible`, `workers-ai`, `demo`; the provider must be configured in the deployment (`demo:<anything>` always is).",
    fallback_models:
      "Models (`provider:model`, provider configured) tried in order when a call to `model` fails after its retries with a retryable error (429, 5xx, network) or sends no first token within `first_token_timeout_ms`; at most 4.",
    first_token_timeout_ms: "How long a model may take to send its first token before the call falls back to the next model (null: no limit).",
    model_timeout_ms: "The longest one model call may take, its fallbacks included; past it the call fails (null: only the turn's wall clock).",
    fallback_cooldown_ms:
      "How long a model whose failure made a call fall back is skipped (its circuit breaker open) by later turns' calls, which go straight to the next model; the rest of the turn always skips it. After the cool-down one call tries it again. 0: only the rest of the turn skips it.",
    instructions: "The system prompt.",
    tools:
      "Built-in tools and the deployment's TypeScript tools (createRuntime) by name, and MCP tools as `mcp:<server>/<tool>` or `mcp:<server>/*` (the server must be in `mcp_servers`); no duplicates.",
    http_tools: "Webhook tools; declaring one exposes it.",
    mcp_servers: "Remote MCP servers whose tools `tools` may name; names unique.",
    handoffs: "Names of other registered agents; each becomes a `transfer_to_<name>` tool.",
    output_schema: 'A JSON Schema (root `type: "object"`) the final answer must satisfy; the turn fails `output_invalid` after 2 retries.',
    max_steps: 'Executor model calls per turn; at the limit the turn completes with `stop_reason: "max_steps"`.',
    temperature: "Sampling temperature.",
    max_tokens: "Output tokens per model call (null: the provider's default).",
    planning_enabled: "Run one planner pass (no tools) before the first executor call.",
    planning_model: "The planner's model (`provider:model`, provider configured); null: `model`.",
    planning_instructions: "The planner's system prompt; empty: `instructions`.",
    budget_awareness:
      '`"per-message"` (tell the model its context use on every message) or `"limit:<0-100>"` (compact older turns past that percentage of the window).',
    context_window: "Overrides the model's known context window (tokens), for budget awareness.",
    hitl_tools:
      "Tools whose every call waits for a human decision; each must be a tool of the agent. An entry is a name or {name, allow_edits (default true), remind_after_ms, approvals (distinct approvers, default 1), timeout_ms (instead of approval_timeout_ms), on_timeout (reject or approve)}.",
    approval_timeout_ms: "How long a call waits for a decision before it is resolved `timed_out`.",
    emit_mcp_progress: "Emit `mcp.progress` events for MCP tool calls; `false` only silences them.",
    injected_tool_args:
      "`{name: description}`: optional string arguments added to every tool's schema (at most 16); a clash with a tool's own parameter is 422.",
    allow_parallel_subagents: "Expose `spawn_subagents`.",
    max_parallel_subagents: "Jobs per `spawn_subagents` call.",
    budget: "The turn budget; each value may lower the deployment's cap, and model calls, tool calls and wall clock may go up to its maximum.",
    subscriptions:
      "Outbound subscriptions every session of this agent gets, from the start of its log (their secrets are write-only and read as `[redacted]`).",
  },
  http_tools: {
    name: "The tool's name as the model sees it.",
    description: "What the tool does, for the model.",
    parameters: 'The arguments\' JSON Schema (root `type: "object"`); arguments that do not match are an error result and the tool does not run.',
    url: "Called with `POST {tool, args, session_id, turn_id, tool_call_id}`; a 2xx body is the result. Must be under `TOOL_URL_ALLOWLIST`.",
    permission_class: "The class the session's policy must enable.",
    parallel_safe: "Whether calls may run concurrently with others of the same step.",
    timeout_ms: "A call not answered in time is an error result.",
    lock: "Calls of tools holding the same lock never run at the same time.",
  },
  mcp_servers: {
    name: "The server's name in `mcp:<server>/<tool>` and in the model's `<server>__<tool>`.",
    url: "The Streamable HTTP endpoint; must be under `TOOL_URL_ALLOWLIST`.",
    headers: "Sent with every request (for example an `authorization`).",
    permission_class:
      "The class of the server's tools; a tool's `destructiveHint` raises it to `external_mutate`, and on a trusted server `readOnlyHint` lowers it to `safe`.",
    trusted: "Whether the server's `readOnlyHint` annotations are believed.",
  },
  a2a_agents: {
    permission_class: "The class the session's policy must enable for the tool.",
  },
  budget: {
    max_depth: "How deep sub-agents nest; at the deepest level the sub-agent tools are absent.",
    max_iterations_per_level: "Model calls of one sub-agent; reaching it ends only that sub-agent (`iteration_limit`).",
    max_parallel_per_turn: "Tool calls of one step that run at once.",
    max_total_subtasks: "Sub-agents over the whole turn.",
    max_total_llm_calls: "Model calls over the whole turn (planner and compaction calls included).",
    max_total_tool_calls: "Tool calls over the whole turn.",
    max_wall_clock_ms: "The turn's wall-clock time, not counting time waiting for a human.",
    max_tool_result_bytes: "Tool payloads larger than this are spilled to R2; the log and the model get a preview.",
    max_history_tokens: "The prompt's estimated size; the oldest turns are dropped to fit, and an input over it alone is 422.",
    max_cost_usd: "USD a turn may spend over its whole sub-agent tree.",
  },
  subscriptions: {},
};

/** The default column of the budget: the deployment's caps, and for the raisable limits their default and maximum. */
const BUDGET_DEFAULTS: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(BUDGET_CAPS).map(([k, v]) => {
      const max = BUDGET_MAXIMA[k as RaisableLimit];
      return [k, max ? `${v}; at most \`${max.setting}\` (default ${max.default}, itself at most ${max.ceiling})` : `the cap, ${v}`];
    }),
  ),
  max_cost_usd: "none",
};

function anchor(section: Section): string {
  return `#${SECTIONS[section].toLowerCase().replaceAll(" ", "-")}`;
}

/** The branches of a nullable field: its non-null schema, and whether null is allowed. */
function unwrapNull(s: JsonSchema): { inner: JsonSchema; nullable: boolean } {
  if (Array.isArray(s.anyOf)) {
    const branches = s.anyOf as JsonSchema[];
    const inner = branches.find((b) => b.type !== "null");
    if (inner && branches.length === 2) return { inner: { ...inner, description: s.description }, nullable: true };
  }
  if (Array.isArray(s.type) && s.type.includes("null")) return { inner: { ...s, type: s.type.find((t) => t !== "null") }, nullable: true };
  return { inner: s, nullable: false };
}

function typeName(name: string, s: JsonSchema, section: Section): string {
  const { inner, nullable } = unwrapNull(s);
  let t: string;
  if (section === "agent" && name in SECTIONS) t = `[${SECTIONS[name as Section]}](${anchor(name as Section)})${inner.type === "array" ? "[]" : ""}`;
  else if (inner.type === "array") t = `${typeName("", (inner.items as JsonSchema) ?? {}, section)}[]`;
  else if (inner.type === "object")
    t = inner.properties
      ? "object"
      : inner.additionalProperties && typeof inner.additionalProperties === "object" && (inner.additionalProperties as JsonSchema).type
        ? `{[name]: ${(inner.additionalProperties as JsonSchema).type}}`
        : "object";
  else if (Array.isArray(inner.enum)) t = inner.enum.length > 8 ? "string (an event type)" : inner.enum.map((v) => `\`${JSON.stringify(v)}\``).join(" \\| ");
  else t = typeof inner.type === "string" ? inner.type : "any";
  return nullable ? `${t} \\| null` : t;
}

function limits(s: JsonSchema): string {
  const { inner } = unwrapNull(s);
  const out: string[] = [];
  const num = (k: string) => (typeof inner[k] === "number" && (inner[k] as number) < Number.MAX_SAFE_INTEGER ? (inner[k] as number) : undefined);
  const range = (lo: number | undefined, hi: number | undefined, unit: string) => {
    if (lo !== undefined && hi !== undefined) out.push(`${lo}..${hi}${unit}`);
    else if (lo !== undefined) out.push(`≥ ${lo}${unit}`);
    else if (hi !== undefined) out.push(`≤ ${hi}${unit}`);
  };
  if (num("exclusiveMinimum") !== undefined) out.push(`> ${num("exclusiveMinimum")}`);
  range(num("minimum"), num("maximum"), "");
  if (num("minLength") === 1 && num("maxLength") === undefined) out.push("non-empty");
  else range(num("minLength"), num("maxLength"), " characters");
  range(num("minItems"), num("maxItems"), " items");
  if (typeof inner.pattern === "string") out.push(`\`${inner.pattern}\``);
  if (inner.format === "uri") out.push("http(s) URL");
  const items = inner.items as JsonSchema | undefined;
  if (items && inner.type === "array" && !items.properties) {
    const each = limits(items);
    if (each) out.push(`each ${each}`);
  }
  const keys = inner.propertyNames as JsonSchema | undefined;
  if (typeof keys?.pattern === "string") out.push(`names \`${keys.pattern}\``);
  const values = inner.additionalProperties as JsonSchema | undefined;
  if (values && typeof values === "object" && typeof values.maxLength === "number") out.push(`values ≤ ${values.maxLength} characters`);
  return out.join("; ");
}

function table(section: Section, schema: JsonSchema, defaults: Record<string, string> = {}): string[] {
  const rows = Object.entries(schema.properties ?? {}).map(([name, s]) => {
    const meaning = s.description ?? FIELD_NOTES[section][name];
    if (!meaning) throw new Error(`configuration reference: ${SECTIONS[section]} field "${name}" has no description (add .describe() or a FIELD_NOTES entry)`);
    const required = schema.required?.includes(name) && s.default === undefined;
    const dflt = defaults[name] ?? (s.default !== undefined ? `\`${JSON.stringify(s.default)}\`` : required ? "required" : "none");
    return `| \`${name}\` | ${typeName(name, s, section)} | ${cell(dflt)} | ${cell(limits(s))} | ${cell(meaning)} |`;
  });
  return ["| field | type | default | limits | meaning |", "| --- | --- | --- | --- | --- |", ...rows];
}

export function configurationMarkdown(): string {
  const root = z.toJSONSchema(AgentConfigSchema, { unrepresentable: "any", io: "input", reused: "inline" }) as JsonSchema;
  const prop = (name: Section): JsonSchema => {
    const s = root.properties![name]!;
    return s.type === "array" ? (s.items as JsonSchema) : s;
  };
  return [
    "# Agent configuration",
    "",
    generatedNote("src/protocol/agent-config.ts"),
    "",
    "`PUT /v1/agents/:name` takes this JSON (snake_case), and `POST /v1/sessions` takes it inline as `agent`",
    "(error paths then start with `agent.`). `GET` returns what was stored, defaults filled in, write-only fields as `[redacted]`. An unknown",
    "field, or any value outside the limits below, is 422 naming the field. Checks that need the deployment (a",
    "configured provider, a registered tool or agent, a URL under `TOOL_URL_ALLOWLIST`) run when the agent is saved.",
    "",
    `## ${SECTIONS.agent}`,
    "",
    ...table("agent", root),
    "",
    `## ${SECTIONS.http_tools}`,
    "",
    "An entry of `http_tools`: a webhook the runtime POSTs the call to. At most 1 MB of a response is read; a redirect is an error result.",
    "",
    ...table("http_tools", prop("http_tools")),
    "",
    `## ${SECTIONS.mcp_servers}`,
    "",
    "An entry of `mcp_servers`, reached over Streamable HTTP.",
    "",
    ...table("mcp_servers", prop("mcp_servers")),
    "",
    `## ${SECTIONS.a2a_agents}`,
    "",
    "An entry of `a2a_agents`: a remote A2A 1.0 agent, a tool `{message, context_id?, task_id?}` that sends it a message (SendStreamingMessage) and returns its task's state and answer; its status updates are `mcp.progress` events, cancelling the turn cancels the remote task, and a task waiting for input is the result's `input_required`.",
    "",
    ...table("a2a_agents", prop("a2a_agents")),
    "",
    `## ${SECTIONS.budget}`,
    "",
    `\`budget\`: each field lowers the deployment's cap for every turn of the agent; \`max_total_llm_calls\`, \`max_total_tool_calls\` and \`max_wall_clock_ms\` may also raise it, up to the deployment's maximum (a wrangler var; a value over it is 422 when the agent is saved, and a lowered maximum also holds back agents saved before); \`max_cost_usd\` (at most ${MAX_COST_USD_CAP}) needs a model with a known price.`,
    "Crossing a limit emits `budget.exceeded` and ends the turn `turn.failed` with `budget_exceeded`, unless the field says otherwise.",
    "",
    ...table("budget", prop("budget"), BUDGET_DEFAULTS),
    "",
    `## ${SECTIONS.subscriptions}`,
    "",
    "An entry of `subscriptions` (at most 5), as the body of `POST /v1/sessions/:sid/subscriptions` without `after`.",
    "",
    ...table("subscriptions", prop("subscriptions")),
    "",
  ].join("\n");
}
