// Eval run routes (docs/guides/evals.md): a run is checked whole (agent version, dataset version, scorers that
// can run here) before its object starts it; reads come from the run's object.
import { compareRuns } from "../engine/evals/aggregate";
import { scorerIssues } from "../engine/evals/scorer-checks";
import { parseAllowlist } from "../engine/url-allowlist";
import type { Env } from "../env";
import { randomId } from "../ids";
import { evalRunObject } from "../objects/evals/eval-run-object";
import { currentAgent } from "../objects/registry/agent-cache";
import { openAgent } from "../objects/registry/agent-resolve";
import { evalsOf } from "../objects/registry/evals-rpc";
import { registry } from "../objects/registry/registry-object";
import { ApiError } from "../protocol/errors";
import { evals as ops } from "../protocol/operations";
import { providerEnv } from "../providers";
import { router } from "./http";
import { route } from "./operation-route";

const RUN_ID = /^evr_[0-9a-f]{24}$/;
const DEFAULT_CONCURRENCY = 4;

/** The run's object when the id names one that started; 404 otherwise. */
async function existingRun(env: Env, id: string) {
  const run = RUN_ID.test(id) ? await evalRunObject(env, id).view() : null;
  if (!run) throw ApiError.notFound("Eval run", id);
  return { run, object: evalRunObject(env, id) };
}

export const evals = router()
  .openapi(route(ops.createEvalRun), async (c) => {
    const body = c.req.valid("json");
    const issues = scorerIssues(body.scorers, (i) => `scorers.${i}`, providerEnv(c.env), parseAllowlist(c.env.TOOL_URL_ALLOWLIST));
    if (issues.length > 0) throw ApiError.validation(issues);
    const current = await currentAgent(c.env, body.agent);
    if (!current) throw ApiError.validation([{ path: "agent", reason: `no agent "${body.agent}"` }]);
    const opened = await openAgent(c.env, `${body.agent}@${body.version ?? current.routing.version}`, null, "version");
    const dataset = await evalsOf(registry(c.env)).dataset(body.dataset.name, body.dataset.version);
    if (!dataset) {
      const path = body.dataset.version === undefined ? "dataset.name" : "dataset.version";
      throw ApiError.validation([
        { path, reason: `no dataset "${body.dataset.name}"${body.dataset.version === undefined ? "" : ` version ${body.dataset.version}`}` },
      ]);
    }
    const id = randomId("evr");
    const spec = {
      id,
      agent: body.agent,
      version: opened.version,
      dataset: { name: dataset.name, version: dataset.version },
      scorers: body.scorers,
      concurrency: body.concurrency ?? DEFAULT_CONCURRENCY,
      config: opened.config,
      by: c.get("principal").id,
    };
    return c.json(await evalRunObject(c.env, id).start(spec, dataset.items, c.get("keyHash")), 202);
  })
  .openapi(route(ops.getEvalRun), async (c) => c.json((await existingRun(c.env, c.req.valid("param").id)).run, 200))
  .openapi(route(ops.listEvalCases), async (c) => {
    const { id } = c.req.valid("param");
    const { object } = await existingRun(c.env, id);
    return c.json({ run_id: id, cases: (await object.cases()) ?? [] }, 200);
  })
  .openapi(route(ops.compareEvalRuns), async (c) => {
    const { a, b } = c.req.valid("json");
    const [ra, rb] = [await existingRun(c.env, a), await existingRun(c.env, b)];
    return c.json(compareRuns({ a, b }, (await ra.object.cases()) ?? [], (await rb.object.cases()) ?? []), 200);
  });
