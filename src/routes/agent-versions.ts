// An agent's versions, labels and traffic (docs/guides/versions.md). A deleted agent's labels and traffic go
// with it; its versions are kept, each readable by number (the sessions that ran them name them, and a new
// agent of the name goes on numbering from them), but the agent has no list of versions any more: a 404 that
// says it was deleted.

import type { Env } from "../env";
import { forgetAgent } from "../objects/registry/agent-cache";
import { versionsOf } from "../objects/registry/agent-versions-rpc";
import { registry } from "../objects/registry/registry-object";
import type { AgentConfig } from "../protocol/agent-config";
import { LabelName } from "../protocol/agent-versions";
import { diffConfigs } from "../protocol/config-diff";
import { ApiError, type FieldIssue, zodIssues } from "../protocol/errors";
import { agentVersions as ops } from "../protocol/operations";
import { redactAgentConfig } from "../protocol/redact";
import { intParam } from "../protocol/strict-values";
import { checkGate } from "./eval-gate";
import { router } from "./http";
import { route } from "./operation-route";

const VERSION_RANGE = { min: 1, max: 999_999_999 };
const stored = (env: Env) => versionsOf(registry(env));

async function version(env: Env, name: string, raw: string, path = "version"): Promise<{ version: number; config: AgentConfig }> {
  const v = intParam(path, raw, VERSION_RANGE);
  const found = await stored(env).get(name, v);
  if (!found) throw ApiError.notFound("Agent version", `${name}@${v}`);
  return { version: v, config: found.config as AgentConfig };
}

/** 404 unless the agent exists now (labels and traffic are a live agent's). */
async function existing(env: Env, name: string): Promise<void> {
  if (!(await stored(env).exists(name))) throw ApiError.notFound("Agent", name);
}

const refuse = (issues: FieldIssue[]) => {
  if (issues.length > 0) throw ApiError.validation(issues);
};

export const agentVersions = router()
  .openapi(route(ops.listAgentVersions), async (c) => {
    const { name } = c.req.valid("param");
    const versions = await stored(c.env).list(name);
    if (versions.length === 0) throw ApiError.notFound("Agent", name);
    if (!(await stored(c.env).exists(name))) {
      const kept = `its ${versions.length} versions are kept for the sessions that ran them, each readable at GET /v1/agents/${name}/versions/:version`;
      throw new ApiError("not_found", `Agent '${name}' was deleted: ${kept}`, { deleted: true, versions: versions.map((v) => v.version) });
    }
    return c.json({ agent: name, versions }, 200);
  })
  .openapi(route(ops.getAgentVersion), async (c) => {
    const { name, version: raw } = c.req.valid("param");
    const v = intParam("version", raw, VERSION_RANGE);
    const found = await stored(c.env).get(name, v);
    if (!found) throw ApiError.notFound("Agent version", `${name}@${v}`);
    return c.json({ ...found, config: redactAgentConfig(found.config as AgentConfig) }, 200);
  })
  .openapi(route(ops.diffAgentVersions), async (c) => {
    const { name, version: raw } = c.req.valid("param");
    const { against: rawAgainst } = c.req.valid("query");
    const to = await version(c.env, name, raw);
    if (rawAgainst === undefined && to.version === 1) refuse([{ path: "against", reason: "is needed: version 1 has no version before it" }]);
    const from = await version(c.env, name, rawAgainst ?? String(to.version - 1), "against");
    const changes = diffConfigs(redactAgentConfig(from.config), redactAgentConfig(to.config));
    return c.json({ agent: name, version: to.version, against: from.version, changes }, 200);
  })
  .openapi(route(ops.listAgentLabels), async (c) => {
    const { name } = c.req.valid("param");
    await existing(c.env, name);
    return c.json({ agent: name, labels: await stored(c.env).labels(name) }, 200);
  })
  .openapi(route(ops.putAgentLabel), async (c) => {
    const { name, label } = c.req.valid("param");
    const body = c.req.valid("json");
    const parsed = LabelName.safeParse(label);
    if (!parsed.success) throw ApiError.validation(zodIssues(parsed.error.issues, "label"));
    await existing(c.env, name);
    if (body.require) {
      if (!(await stored(c.env).get(name, body.version)))
        throw ApiError.validation([{ path: "version", reason: `agent '${name}' has no version ${body.version}` }]);
      const current = (await stored(c.env).labels(name)).find((l) => l.label === label)?.version ?? null;
      await checkGate(c.env, name, body.version, current, body.require);
    }
    refuse(await stored(c.env).moveLabel(name, label, body.version, c.get("keyHash")));
    forgetAgent(name);
    const labels = await stored(c.env).labels(name);
    return c.json(labels.find((l) => l.label === label)!, 200);
  })
  .openapi(route(ops.getAgentTraffic), async (c) => {
    const { name } = c.req.valid("param");
    await existing(c.env, name);
    return c.json(await stored(c.env).traffic(name), 200);
  })
  .openapi(route(ops.putAgentTraffic), async (c) => {
    const { name } = c.req.valid("param");
    const { routes } = c.req.valid("json");
    await existing(c.env, name);
    refuse(await stored(c.env).setTraffic(name, routes, c.get("keyHash")));
    forgetAgent(name);
    return c.json(await stored(c.env).traffic(name), 200);
  });
