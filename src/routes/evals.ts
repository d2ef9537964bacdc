// Eval run routes (docs/guides/evals.md): a run is checked whole (agent version, dataset version, scorers that
// can run here) before its object starts it; reads come from the run's object.
import { compareRuns } from "../engine/evals/aggregate";
import { scorerIssues } from "../engine/evals/scorer-checks";
import { parseAllowlist } from "../engine/url-allowlist";
import type { Env } from "../env";
import { randomId } from "../ids";
import { evalRunObject } from "../objects/evals/eval-run-object";
import type { RunSpec } from "../objects/evals/eval-run-store";
import { type IndexLayout, requestLayout, TEST_LAYOUT_HEADER } from "../objects/index/index-shards";
import { currentAgent } from "../objects/registry/agent-cache";
import { openAgent } from "../objects/registry/agent-resolve";
import { versionsOf } from "../objects/registry/agent-versions-rpc";
import { evalsOf } from "../objects/registry/evals-rpc";
import { registry } from "../objects/registry/registry-object";
import type { DatasetItem } from "../protocol/datasets";
import { ApiError } from "../protocol/errors";
import type { EvalRun, EvalRunBody } from "../protocol/evals";
import { evals as ops } from "../protocol/operations";
import { intParam } from "../protocol/strict-values";
import { providerEnv } from "../providers";
import { recordedItems } from "./eval-recorded";
import { router } from "./http";
import { decodeCursor, encodeCursor } from "./keyset-cursor";
import { route } from "./operation-route";

const RUN_ID = /^evr_[0-9a-f]{24}$/;
const DEFAULT_CONCURRENCY = 4;

/** The run's object when the id names one that started; 404 otherwise. */
async function existingRun(env: Env, id: string) {
  const run = RUN_ID.test(id) ? await evalRunObject(env, id).view() : null;
  if (!run) throw ApiError.notFound("Eval run", id);
  return { run, object: evalRunObject(env, id) };
}

/** The run's cases: a dataset version's items, or recorded turns (422 naming the field when there is none). */
async function runCases(env: Env, body: EvalRunBody, layout: IndexLayout): Promise<{ dataset: RunSpec["dataset"]; items: DatasetItem[] }> {
  if (body.recorded) return { dataset: null, items: await recordedItems(env, layout, body.agent, body.recorded.filter) };
  const asked = body.dataset!;
  const found = await evalsOf(registry(env)).dataset(asked.name, asked.version);
  if (!found) {
    const path = asked.version === undefined ? "dataset.name" : "dataset.version";
    throw ApiError.validation([{ path, reason: `no dataset '${asked.name}'${asked.version === undefined ? "" : ` version ${asked.version}`}` }]);
  }
  return { dataset: { name: found.name, version: found.version }, items: found.items };
}

export const evals = router()
  .openapi(route(ops.createEvalRun), async (c) => {
    const body = c.req.valid("json");
    const issues = scorerIssues(body.scorers, (i) => `scorers.${i}`, providerEnv(c.env), parseAllowlist(c.env.TOOL_URL_ALLOWLIST));
    if (issues.length > 0) throw ApiError.validation(issues);
    const current = await currentAgent(c.env, body.agent);
    if (!current) throw ApiError.validation([{ path: "agent", reason: `no agent '${body.agent}'` }]);
    const opened = await openAgent(c.env, `${body.agent}@${body.version ?? current.routing.version}`, null, "version");
    const { dataset, items } = await runCases(c.env, body, requestLayout(c.env, c.req.header(TEST_LAYOUT_HEADER)));
    const id = randomId("evr");
    const spec = {
      id,
      agent: body.agent,
      version: opened.version,
      dataset,
      ...(body.recorded ? { recorded: body.recorded.filter } : {}),
      scorers: body.scorers,
      concurrency: body.concurrency ?? DEFAULT_CONCURRENCY,
      config: opened.config,
      by: c.get("principal").id,
    };
    return c.json(await evalRunObject(c.env, id).start(spec, items, c.get("keyHash")), 202);
  })
  .openapi(route(ops.getEvalRun), async (c) => c.json((await existingRun(c.env, c.req.valid("param").id)).run, 200))
  .openapi(route(ops.listEvalCases), async (c) => {
    const { id } = c.req.valid("param");
    const { object } = await existingRun(c.env, id);
    return c.json({ run_id: id, cases: (await object.cases()) ?? [] }, 200);
  })
  .openapi(route(ops.listEvalRuns), async (c) => {
    const { agent, status, limit: rawLimit, cursor } = c.req.valid("query");
    const limit = intParam("limit", rawLimit, { min: 1, max: 100 }, 20);
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await evalsOf(registry(c.env)).listRuns({ agent, status, before, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return c.json({ runs: page, next_cursor: rows.length > limit && last ? encodeCursor(last.created_at, last.id) : null }, 200);
  })
  .openapi(route(ops.cancelEvalRun), async (c) => {
    const { id } = c.req.valid("param");
    type Cancelled = { run: EvalRun; cancelled: boolean } | null; // the stub's RPC typing makes it never (EvalRun holds unknowns)
    const done = RUN_ID.test(id) ? ((await evalRunObject(c.env, id).cancelRun()) as Cancelled) : null;
    if (!done) throw ApiError.notFound("Eval run", id);
    if (!done.cancelled) throw new ApiError("conflict", `Eval run '${id}' has already ended: it is ${done.run.status}`, { status: done.run.status });
    return c.json(done.run, 200);
  })
  .openapi(route(ops.getVersionScores), async (c) => {
    const { name, version: raw } = c.req.valid("param");
    const version = intParam("version", raw, { min: 1, max: 999_999_999 });
    if (!(await versionsOf(registry(c.env)).get(name, version))) throw ApiError.notFound("Agent version", `${name}@${version}`);
    return c.json({ agent: name, version, ...(await evalsOf(registry(c.env)).versionScores(name, version)) }, 200);
  })
  .openapi(route(ops.compareEvalRuns), async (c) => {
    const { a, b } = c.req.valid("json");
    const [ra, rb] = [await existingRun(c.env, a), await existingRun(c.env, b)];
    return c.json(compareRuns({ a, b }, (await ra.object.cases()) ?? [], (await rb.object.cases()) ?? []), 200);
  });
