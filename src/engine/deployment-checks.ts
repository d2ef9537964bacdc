// Agent config checks that need the deployment rather than the JSON alone: configured providers, known
// tools, handoff targets and the URL allowlist.
import { type AgentConfig, hitlRules } from "../protocol/agent-config";
import type { BudgetMaxima } from "../protocol/budget-maxima";
import type { FieldIssue } from "../protocol/errors";
import { type Provider, parseModelSpec } from "../protocol/model-spec";
import { budgetIssues } from "./budget-limits";
import { scorerIssues } from "./evals/scorer-checks";
import { guardrailIssues } from "./guardrails/config-checks";
import { type ProviderEnv, providerConfigured } from "./models";
import { type PriceOverrides, priceOf } from "./pricing";
import { BUILTIN_TOOLS } from "./tools/builtins";
import { RUN_CODE } from "./tools/code-mode";
import { HANDOFF_PREFIX } from "./tools/handoff";
import { type InProcessTools, NO_IN_PROCESS_TOOLS } from "./tools/in-process";
import { injectedArgClashes } from "./tools/injected-args";
import { parseMcpRef } from "./tools/mcp-names";
import { SPAWN_SUBAGENTS } from "./tools/subagent-tools";
import { ALL_CLASSES_POLICY, resolveToolbelt } from "./tools/toolbelt";
import { urlAllowed } from "./url-allowlist";

/** What to set so that a provider is configured. */
const PROVIDER_SETTING: Record<Provider, string> = {
  openai: "the OPENAI_API_KEY secret",
  anthropic: "the ANTHROPIC_API_KEY secret",
  "openai-compatible": "the OPENAI_COMPATIBLE_BASE_URL variable (and OPENAI_COMPATIBLE_API_KEY if the server needs one)",
  "workers-ai": 'an AI binding ([ai] binding = "AI" in wrangler.toml)',
  demo: "nothing",
};

export interface DeploymentContext {
  env: ProviderEnv;
  /** Prefixes from TOOL_URL_ALLOWLIST. */
  urlAllowlist: string[];
  /** Names of the registered agents, for checking handoff targets. */
  agentNames: Set<string>;
  /** Names of the registered code tools the config's `tools` names (docs/guides/code-tools.md). */
  codeToolNames?: Set<string>;
  /** The deployment's own model prices (MODEL_PRICES). */
  prices?: PriceOverrides;
  /** The deployment's maxima of the raisable budget limits (BUDGET_MAX_*). */
  budgetMaxima: BudgetMaxima;
  /** The deployment's in-process tools (createRuntime's `tools`). */
  inProcessTools?: InProcessTools;
}

/** Checks that depend on the deployment rather than on the JSON alone. */
export function deploymentIssues(config: AgentConfig, ctx: DeploymentContext): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const models: [path: string, spec: string | null][] = [
    ["model", config.model],
    ["planning_model", config.planning_model],
    ...config.fallback_models.map((m, i): [string, string] => [`fallback_models.${i}`, m]),
  ];
  for (const [path, model] of models) {
    const spec = model ? parseModelSpec(model) : null;
    if (spec && !providerConfigured(spec.provider, ctx.env)) {
      issues.push({ path, reason: `provider "${spec.provider}" is not configured in this deployment: set ${PROVIDER_SETTING[spec.provider]}` });
    }
  }
  // A money budget needs a price: a model with none would never reach it.
  const unpriced = [config.model, ...config.fallback_models].find((m) => priceOf(m, ctx.prices) === null);
  if (config.budget.max_cost_usd !== undefined && unpriced) {
    issues.push({ path: "budget.max_cost_usd", reason: `model "${unpriced}" has no known price: set one in MODEL_PRICES first` });
  }
  issues.push(...budgetIssues(config.budget, ctx.budgetMaxima));
  issues.push(...guardrailIssues(config, ctx));
  const online = (config.online_scorers ?? []).map((o) => o.scorer);
  issues.push(...scorerIssues(online, (i) => `online_scorers.${i}.scorer`, ctx.env, ctx.urlAllowlist));
  const inProcess = ctx.inProcessTools ?? NO_IN_PROCESS_TOOLS;
  // Code mode gives the model its own run_code, which would replace a tool of that name.
  const RUN_CODE_TAKEN = `"${RUN_CODE}" is code mode's own tool: rename this tool or turn code_mode off`;
  const httpNames = new Set<string>();
  config.http_tools.forEach((t, i) => {
    if (BUILTIN_TOOLS.has(t.name) || t.name.startsWith(HANDOFF_PREFIX)) {
      issues.push({ path: `http_tools.${i}.name`, reason: `"${t.name}" clashes with a built-in tool` });
    }
    if (inProcess.has(t.name)) issues.push({ path: `http_tools.${i}.name`, reason: `"${t.name}" clashes with an in-process tool of this deployment` });
    if (httpNames.has(t.name)) issues.push({ path: `http_tools.${i}.name`, reason: `duplicate tool name "${t.name}"` });
    if (config.code_mode && t.name === RUN_CODE) issues.push({ path: `http_tools.${i}.name`, reason: RUN_CODE_TAKEN });
    httpNames.add(t.name);
    if (!urlAllowed(t.url, ctx.urlAllowlist)) {
      issues.push({ path: `http_tools.${i}.url`, reason: "is not under any TOOL_URL_ALLOWLIST prefix" });
    }
  });
  (config.a2a_agents ?? []).forEach((a, i) => {
    if (BUILTIN_TOOLS.has(a.name) || a.name.startsWith(HANDOFF_PREFIX))
      issues.push({ path: `a2a_agents.${i}.name`, reason: `"${a.name}" clashes with a built-in tool` });
    if (httpNames.has(a.name)) issues.push({ path: `a2a_agents.${i}.name`, reason: `duplicate tool name "${a.name}"` });
    httpNames.add(a.name);
    if (!urlAllowed(a.url, ctx.urlAllowlist)) issues.push({ path: `a2a_agents.${i}.url`, reason: "is not under any TOOL_URL_ALLOWLIST prefix" });
  });
  const servers = new Set<string>();
  config.mcp_servers.forEach((server, i) => {
    if (servers.has(server.name)) issues.push({ path: `mcp_servers.${i}.name`, reason: `duplicate MCP server name "${server.name}"` });
    servers.add(server.name);
    if (!urlAllowed(server.url, ctx.urlAllowlist)) {
      issues.push({ path: `mcp_servers.${i}.url`, reason: "is not under any TOOL_URL_ALLOWLIST prefix" });
    }
  });
  config.subscriptions?.forEach((sub, i) => {
    if (!urlAllowed(sub.url, ctx.urlAllowlist)) issues.push({ path: `subscriptions.${i}.url`, reason: "is not under any TOOL_URL_ALLOWLIST prefix" });
  });
  const seen = new Set<string>();
  config.tools.forEach((name, i) => {
    if (seen.has(name)) issues.push({ path: `tools.${i}`, reason: `duplicate tool name "${name}"` });
    if (config.code_mode && name === RUN_CODE) issues.push({ path: `tools.${i}`, reason: RUN_CODE_TAKEN });
    seen.add(name);
    const mcp = name.startsWith("mcp:") ? parseMcpRef(name) : null;
    if (name.startsWith("mcp:")) {
      if (!mcp) issues.push({ path: `tools.${i}`, reason: `must be "mcp:<server>/<tool>" or "mcp:<server>/*"` });
      else if (!servers.has(mcp.server)) issues.push({ path: `tools.${i}`, reason: `names MCP server "${mcp.server}", which is not in mcp_servers` });
    } else if (name === SPAWN_SUBAGENTS) {
      // The contract lists spawn_subagents as a built-in; it exists only with parallel sub-agents allowed.
      if (!config.allow_parallel_subagents) issues.push({ path: `tools.${i}`, reason: "spawn_subagents needs allow_parallel_subagents: true" });
    } else if (!BUILTIN_TOOLS.has(name) && !httpNames.has(name) && !inProcess.has(name) && !ctx.codeToolNames?.has(name)) {
      issues.push({ path: `tools.${i}`, reason: `unknown tool "${name}"` });
    }
  });
  const handoffs = new Set<string>();
  config.handoffs.forEach((name, i) => {
    if (handoffs.has(name)) issues.push({ path: `handoffs.${i}`, reason: `duplicate handoff "${name}"` });
    handoffs.add(name);
    if (name === config.name) issues.push({ path: `handoffs.${i}`, reason: "an agent cannot hand off to itself" });
    else if (!ctx.agentNames.has(name)) issues.push({ path: `handoffs.${i}`, reason: `unknown agent "${name}"` });
  });
  const belt = resolveToolbelt(config, ALL_CLASSES_POLICY, [], inProcess);
  hitlRules(config.hitl_tools).forEach(({ name }, i) => {
    // An MCP tool is named as in `tools` (its server's tools are known only when a turn starts).
    const mcp = parseMcpRef(name);
    const known = mcp
      ? config.tools.includes(name) ||
        config.tools.includes(`mcp:${mcp.server}/*`) ||
        (mcp.tool === "*" && config.tools.some((t) => parseMcpRef(t)?.server === mcp.server))
      : belt.has(name) || (config.tools.includes(name) && ctx.codeToolNames?.has(name) === true);
    if (!known) issues.push({ path: `hitl_tools.${i}`, reason: `"${name}" is not a tool of this agent` });
  });
  for (const tool of belt.values()) {
    for (const key of injectedArgClashes(tool.parameters, config.injected_tool_args)) {
      issues.push({ path: `injected_tool_args.${key}`, reason: `clashes with a parameter of tool "${tool.name}"` });
    }
  }
  return issues;
}
