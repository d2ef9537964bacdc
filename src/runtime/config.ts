// The agent configuration (SPEC §3): one zod schema for validation and defaults, plus the checks that
// need the deployment (configured providers, known tools, the URL allowlist).
import { z } from "zod";
import type { FieldIssue } from "./errors";
import { PROVIDERS, parseModelSpec, type ProviderEnv, providerConfigured } from "./models";
import { BUILTIN_TOOLS } from "./tools/builtins";
import { PERMISSION_CLASSES } from "./tools/types";

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const nameField = z.string().regex(NAME, "must match ^[A-Za-z0-9_-]{1,64}$");

export const modelSpecField = z
  .string()
  .refine((s) => parseModelSpec(s) !== null, {
    message: `must be "provider:model" with provider one of ${PROVIDERS.join(", ")}`,
  });

const jsonSchemaObject = z
  .record(z.string(), z.unknown())
  .refine((s) => s.type === undefined || s.type === "object", { message: 'must be a JSON Schema with type "object"' });

export const HttpToolSchema = z.strictObject({
  name: nameField,
  description: z.string().max(4000).default(""),
  parameters: jsonSchemaObject.default({ type: "object", properties: {} }),
  url: z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }),
  permission_class: z.enum(PERMISSION_CLASSES).default("network"),
  parallel_safe: z.boolean().default(true),
  timeout_ms: z.int().min(1).max(120_000).default(10_000),
});
export type HttpToolSpec = z.infer<typeof HttpToolSchema>;

export const AgentConfigSchema = z.strictObject({
  name: nameField,
  model: modelSpecField.default("openai:gpt-4o"),
  instructions: z.string().max(200_000).default(""),
  tools: z.array(z.string().min(1)).max(128).default([]),
  http_tools: z.array(HttpToolSchema).max(64).default([]),
  max_steps: z.int().min(1, "must be at least 1").max(1000).default(10),
  temperature: z.number().min(0).max(2).default(1.0),
  max_tokens: z.int().min(1).nullable().default(null),
});
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
export type AgentConfigInput = z.input<typeof AgentConfigSchema>;

export interface DeploymentContext {
  env: ProviderEnv;
  /** Prefixes from TOOL_URL_ALLOWLIST. */
  urlAllowlist: string[];
}

export function parseAllowlist(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function urlAllowed(url: string, allowlist: string[]): boolean {
  return allowlist.some((prefix) => url.startsWith(prefix));
}

/** Checks that depend on the deployment rather than on the JSON alone. */
export function deploymentIssues(config: AgentConfig, ctx: DeploymentContext): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const spec = parseModelSpec(config.model);
  if (spec && !providerConfigured(spec.provider, ctx.env)) {
    issues.push({ path: "model", reason: `provider "${spec.provider}" is not configured in this deployment` });
  }
  const httpNames = new Set<string>();
  config.http_tools.forEach((t, i) => {
    if (t.name in BUILTIN_TOOLS) issues.push({ path: `http_tools.${i}.name`, reason: `"${t.name}" clashes with a built-in tool` });
    if (httpNames.has(t.name)) issues.push({ path: `http_tools.${i}.name`, reason: `duplicate tool name "${t.name}"` });
    httpNames.add(t.name);
    if (!urlAllowed(t.url, ctx.urlAllowlist)) {
      issues.push({ path: `http_tools.${i}.url`, reason: "is not under any TOOL_URL_ALLOWLIST prefix" });
    }
  });
  const seen = new Set<string>();
  config.tools.forEach((name, i) => {
    if (seen.has(name)) issues.push({ path: `tools.${i}`, reason: `duplicate tool name "${name}"` });
    seen.add(name);
    if (!(name in BUILTIN_TOOLS) && !httpNames.has(name)) {
      issues.push({ path: `tools.${i}`, reason: `unknown tool "${name}"` });
    }
  });
  return issues;
}
