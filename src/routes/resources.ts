// A resource's memory over HTTP (docs/guides/memory.md): working memory read and written, recall
// search, erasure. A token reaches its own subject's resource only: any other answers 404, as if it did not exist;
// within it, the working memory of its own agent and the messages of the sessions it reaches.
import type { Context } from "hono";
import { fieldPath } from "../engine/json-schema";
import type { JsonSchema } from "../engine/tools/types";
import type { Env } from "../env";
import { resourceMemory, type StoredDocument } from "../objects/memory/resource-memory-object";
import { registry } from "../objects/registry/registry-object";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError, unwrap } from "../protocol/errors";
import type { WorkingMemory } from "../protocol/memory";
import { resources as ops } from "../protocol/operations";
import type { Principal } from "../protocol/permissions";
import { intParam } from "../protocol/strict-values";
import { workingScope } from "../session/memory/session-memory";
import { checkTokenSession } from "./auth";
import { erasedAnswer, eraseSessions } from "./erasure";
import { type AppEnv, router, sessionStub } from "./http";
import { route } from "./operation-route";

/** The memory object of `rid`, for a caller that may reach it. */
function resourceFor(c: Context<AppEnv>, rid: string) {
  const principal = c.get("principal");
  if (principal.kind === "token" && principal.subject !== rid) throw ApiError.notFound("Resource", rid);
  return resourceMemory(c.env, rid);
}

type Token = Extract<Principal, { kind: "token" }>;

/** The agent a token acts as: the one it is bound to, or (bound to a session) the agent its session was opened with. */
async function tokenAgent(env: Env, token: Token): Promise<string> {
  if (token.agent !== null) return token.agent;
  return unwrap(await sessionStub(env, token.session_id ?? "").access()).access.opened_agent;
}

/** The agent whose `memory.working` applies: `?agent=`, which a token may only leave out (then its own) or name as its own. */
async function agentOf(c: Context<AppEnv>, named: string | undefined): Promise<string | undefined> {
  const principal = c.get("principal");
  if (principal.kind !== "token") return named;
  const own = await tokenAgent(c.env, principal);
  if (named !== undefined && named !== own)
    throw new ApiError("forbidden", `This token is bound to agent "${own}"; it may not reach the memory of agent "${named}"`);
  return own;
}

/** The sessions whose messages a caller may search: every one for a key; for a token, those it reaches (as on the session routes). */
async function searchable(c: Context<AppEnv>, stub: ReturnType<typeof resourceMemory>): Promise<string[] | undefined> {
  const principal = c.get("principal");
  if (principal.kind !== "token") return undefined;
  const reached = await Promise.all(
    (await stub.sessions()).map((sid) =>
      checkTokenSession(c.env, principal, sid).then(
        () => sid,
        (err: unknown) => {
          if (err instanceof ApiError) return null;
          throw err;
        },
      ),
    ),
  );
  return reached.filter((sid) => sid !== null);
}

type Target = { scope: string; agent: string | null; schema?: JsonSchema; template?: Record<string, unknown> };

/** Which document `?agent=` names, and its schema and template (none: the resource's own document, unchecked). */
async function targetOf(c: Context<AppEnv>, named: string | undefined): Promise<Target> {
  const agentName = await agentOf(c, named);
  if (agentName === undefined) return { scope: "", agent: null };
  // The stub types the config as never (its JSON Schema fields are not typed as serializable); it is an AgentConfig.
  const config = (await registry(c.env).get(agentName)) as AgentConfig | null;
  if (!config) throw ApiError.notFound("Agent", agentName);
  const working = config.memory?.working;
  return { ...workingScope(config), schema: working?.schema, template: working?.template };
}

const view = (resource_id: string, agent: string | null, d: StoredDocument): WorkingMemory => ({
  resource_id,
  agent,
  document: JSON.parse(d.json) as Record<string, unknown>,
  version: d.version,
  updated_at: d.updated_at,
});

async function write(c: Context<AppEnv>, rid: string, agentName: string | undefined, kind: "put" | "patch", value: Record<string, unknown>) {
  const stub = resourceFor(c, rid);
  const t = await targetOf(c, agentName);
  const out = await stub.write({ scope: t.scope, kind, value, schema: t.schema, template: t.template });
  // A put's document is the body's `document`; a patch is the body itself.
  if (!out.ok) throw ApiError.validation(out.problems.map((p) => ({ path: fieldPath(kind === "put" ? "document" : "", p.pointer), reason: p.reason })));
  return view(rid, t.agent, out.stored);
}

export const resources = router()
  .openapi(route(ops.getMemory), async (c) => {
    const { rid } = c.req.valid("param");
    const stub = resourceFor(c, rid);
    const t = await targetOf(c, c.req.valid("query").agent);
    return c.json(view(rid, t.agent, await stub.working(t.scope, t.template)), 200);
  })
  .openapi(route(ops.putMemory), async (c) => {
    const { rid } = c.req.valid("param");
    return c.json(await write(c, rid, c.req.valid("query").agent, "put", c.req.valid("json").document), 200);
  })
  .openapi(route(ops.patchMemory), async (c) => {
    const { rid } = c.req.valid("param");
    return c.json(await write(c, rid, c.req.valid("query").agent, "patch", c.req.valid("json")), 200);
  })
  .openapi(route(ops.searchMemory), async (c) => {
    const { rid } = c.req.valid("param");
    const { q, limit: raw } = c.req.valid("query");
    const limit = intParam("limit", raw, { min: 1, max: 50 }, 10);
    const stub = resourceFor(c, rid);
    return c.json({ hits: await stub.search(q, limit, { within: await searchable(c, stub) }) }, 200);
  })
  .openapi(route(ops.eraseResource), async (c) => {
    const { rid } = c.req.valid("param");
    const stub = resourceFor(c, rid);
    // The sessions first: each erase also takes its turns out of the index, which the resource's erase then empties.
    const left = c.req.valid("query").sessions === "true" ? await eraseSessions(c.env, await stub.sessions()) : [];
    await stub.erase();
    return erasedAnswer(c, left);
  });
