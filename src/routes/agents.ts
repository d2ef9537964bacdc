// Agent registry routes (SPEC §4).
import { createRoute, z } from "@hono/zod-openapi";
import { forgetAgent } from "../durable/agent-cache";
import { providerEnv } from "../durable/providers";
import { registry } from "../durable/registry-object";
import type { Env } from "../env";
import { type AgentConfig, AgentConfigSchema } from "../protocol/agent-config";
import { keepStoredSecrets } from "../protocol/keep-secrets";
import { REDACTED, redactAgentConfig } from "../protocol/redact";
import { SubscriptionSpec } from "../protocol/subscriptions";
import { deploymentIssues } from "../runtime/deployment-checks";
import { ApiError, zodIssues } from "../runtime/errors";
import { parsePriceOverrides } from "../runtime/pricing";
import { parseAllowlist } from "../runtime/url-allowlist";
import { errorResponses, router } from "./http";

const AgentConfigDoc = AgentConfigSchema.openapi("AgentConfig");
/** A config as PUT takes it: a subscription's secret may also be the placeholder of the stored one (it is kept). */
const AgentPutBody = AgentConfigSchema.partial({ name: true }).extend({
  subscriptions: z.array(SubscriptionSpec.extend({ secret: z.union([z.literal(REDACTED), SubscriptionSpec.shape.secret.unwrap()]).optional() })).optional(),
});
const NameParam = z.object({ name: z.string().openapi({ param: { name: "name", in: "path" }, example: "helper" }) });

/**
 * Validates a config against the schema and the deployment; 422 with every failing field. Placeholders of
 * write-only fields take their values from `stored` (the config the input was read from).
 */
export async function validateAgentConfig(input: unknown, env: Env, pathPrefix = "", stored: AgentConfig | null = null): Promise<AgentConfig> {
  const kept = keepStoredSecrets(input, stored, pathPrefix);
  if (kept.issues.length > 0) throw ApiError.validation(kept.issues);
  const parsed = AgentConfigSchema.safeParse(kept.input);
  if (!parsed.success) throw ApiError.validation(zodIssues(parsed.error.issues, pathPrefix));
  const agentNames = parsed.data.handoffs.length > 0 ? new Set(await registry(env).names()) : new Set<string>();
  const issues = deploymentIssues(parsed.data, {
    env: providerEnv(env),
    urlAllowlist: parseAllowlist(env.TOOL_URL_ALLOWLIST),
    agentNames,
    prices: parsePriceOverrides(env.MODEL_PRICES),
  });
  if (issues.length > 0) throw ApiError.validation(issues.map((i) => ({ ...i, path: [pathPrefix, i.path].filter(Boolean).join(".") })));
  return parsed.data;
}

export const agents = router()
  .openapi(
    createRoute({
      method: "put",
      path: "/v1/agents/{name}",
      operationId: "putAgent",
      summary: "Create or replace an agent",
      request: {
        params: NameParam,
        body: { required: true, content: { "application/json": { schema: AgentPutBody } } },
      },
      responses: {
        200: { description: "Replaced", content: { "application/json": { schema: AgentConfigDoc } } },
        201: { description: "Created", content: { "application/json": { schema: AgentConfigDoc } } },
        ...errorResponses(400, 401, 413, 422),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const body = c.req.valid("json");
      if (body.name !== undefined && body.name !== name) {
        throw ApiError.validation([{ path: "name", reason: `must equal the name in the path ("${name}")` }]);
      }
      const config = await validateAgentConfig({ ...body, name }, c.env, "", await registry(c.env).get(name));
      const { created } = await registry(c.env).put(config);
      forgetAgent(name);
      return c.json(redactAgentConfig(config), created ? 201 : 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/agents/{name}",
      operationId: "getAgent",
      summary: "Read an agent",
      request: { params: NameParam },
      responses: {
        200: { description: "The stored config", content: { "application/json": { schema: AgentConfigDoc } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const config = await registry(c.env).get(name);
      if (!config) throw ApiError.notFound("Agent", name);
      return c.json(redactAgentConfig(config), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/agents",
      operationId: "listAgents",
      summary: "List agents",
      responses: {
        200: { description: "All agents by name", content: { "application/json": { schema: z.object({ agents: z.array(AgentConfigDoc) }) } } },
        ...errorResponses(401),
      },
    }),
    async (c) => {
      const list: AgentConfig[] = await registry(c.env).list();
      return c.json({ agents: list.map(redactAgentConfig) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/v1/agents/{name}",
      operationId: "deleteAgent",
      summary: "Delete an agent (existing sessions keep the config they started with)",
      request: { params: NameParam },
      responses: {
        200: { description: "Deleted", content: { "application/json": { schema: z.object({ deleted: z.boolean(), name: z.string() }) } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      if (!(await registry(c.env).remove(name))) throw ApiError.notFound("Agent", name);
      forgetAgent(name);
      return c.json({ deleted: true, name }, 200);
    },
  );
