// Agent registry routes (docs/reference/api.md).

import { budgetMaxima } from "../engine/budget-limits";
import { deploymentIssues } from "../engine/deployment-checks";
import { parsePriceOverrides } from "../engine/pricing";
import { codeToolNames } from "../engine/tools/toolbelt";
import { parseAllowlist } from "../engine/url-allowlist";
import { forgetAgent } from "../objects/registry/agent-cache";
import { registry } from "../objects/registry/registry-object";
import { type AgentConfig, AgentConfigSchema } from "../protocol/agent-config";
import type { CodeToolVersion } from "../protocol/code-tools";
import { ApiError, zodIssues } from "../protocol/errors";
import { keepStoredSecrets } from "../protocol/keep-secrets";
import { agents as ops } from "../protocol/operations";
import { redactAgentConfig } from "../protocol/redact";
import { providerEnv } from "../providers";
import { type Deployment, router } from "./http";
import { route } from "./operation-route";

/**
 * Validates a config against the schema and the deployment; 422 with every failing field. Placeholders of
 * write-only fields take their values from `stored` (the config the input was read from).
 */
export async function validateAgentConfig(input: unknown, deployment: Deployment, pathPrefix = "", stored: AgentConfig | null = null): Promise<AgentConfig> {
  const { env } = deployment;
  const kept = keepStoredSecrets(input, stored, pathPrefix);
  if (kept.issues.length > 0) throw ApiError.validation(kept.issues);
  const parsed = AgentConfigSchema.safeParse(kept.input);
  if (!parsed.success) throw ApiError.validation(zodIssues(parsed.error.issues, pathPrefix));
  const agentNames = parsed.data.handoffs.length > 0 ? new Set(await registry(env).names()) : new Set<string>();
  const wanted = codeToolNames(parsed.data, deployment.var.tools);
  const codeTools = wanted.length > 0 ? new Set(((await registry(env).codeToolsNamed(wanted)) as CodeToolVersion[]).map((t) => t.name)) : new Set<string>();
  const issues = deploymentIssues(parsed.data, {
    env: providerEnv(env),
    urlAllowlist: parseAllowlist(env.TOOL_URL_ALLOWLIST),
    agentNames,
    codeToolNames: codeTools,
    prices: parsePriceOverrides(env.MODEL_PRICES),
    budgetMaxima: budgetMaxima(env),
    inProcessTools: deployment.var.tools,
  });
  if (issues.length > 0) throw ApiError.validation(issues.map((i) => ({ ...i, path: [pathPrefix, i.path].filter(Boolean).join(".") })));
  return parsed.data;
}

export const agents = router()
  .openapi(route(ops.putAgent), async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.name !== undefined && body.name !== name) {
      throw ApiError.validation([{ path: "name", reason: `must equal the name in the path ("${name}")` }]);
    }
    const config = await validateAgentConfig({ ...body, name }, c, "", await registry(c.env).get(name));
    const { created, version } = await registry(c.env).put(config, c.get("keyHash"));
    forgetAgent(name);
    // The version the agent runs now (a new one when the config changed): GET .../versions lists them.
    c.header("agent-version", String(version));
    return c.json(redactAgentConfig(config), created ? 201 : 200);
  })
  .openapi(route(ops.getAgent), async (c) => {
    const { name } = c.req.valid("param");
    const config = await registry(c.env).get(name);
    if (!config) throw ApiError.notFound("Agent", name);
    return c.json(redactAgentConfig(config), 200);
  })
  .openapi(route(ops.listAgents), async (c) => {
    const list: AgentConfig[] = await registry(c.env).list();
    return c.json({ agents: list.map(redactAgentConfig) }, 200);
  })
  .openapi(route(ops.deleteAgent), async (c) => {
    const { name } = c.req.valid("param");
    if (!(await registry(c.env).remove(name))) throw ApiError.notFound("Agent", name);
    forgetAgent(name);
    return c.json({ deleted: true, name }, 200);
  });
