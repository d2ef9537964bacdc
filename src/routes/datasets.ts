// Dataset routes (docs/guides/evals.md): items validated (inputs within the turn limits, recorded turns that
// exist and answered) before anything is stored; a PUT with unchanged items stores no version.
import { canonicalJson } from "../engine/request-fingerprint";
import type { Env } from "../env";
import { recordedTurn } from "../objects/evals/session-reads";
import { evalsOf } from "../objects/registry/evals-rpc";
import { registry } from "../objects/registry/registry-object";
import type { DatasetItem, DatasetItemInput } from "../protocol/datasets";
import { DatasetName } from "../protocol/datasets";
import { ApiError, zodIssues } from "../protocol/errors";
import { datasets as ops } from "../protocol/operations";
import { intParam } from "../protocol/strict-values";
import { router } from "./http";
import { route } from "./operation-route";

export const datasetStore = (env: Env) => evalsOf(registry(env));

function checkName(name: string): void {
  const parsed = DatasetName.safeParse(name);
  if (!parsed.success) throw ApiError.validation(zodIssues(parsed.error.issues, "name"));
}

/** Items as stored: a recorded turn becomes its input and answer; a file must travel with the item. */
async function resolveItems(env: Env, given: DatasetItemInput[]): Promise<DatasetItem[]> {
  const out: DatasetItem[] = [];
  for (const [i, item] of given.entries()) {
    if ("from" in item) {
      const { session_id, turn_id } = item.from;
      const turn = await recordedTurn(env, session_id, turn_id, `items.${i}.from`);
      out.push({ input: turn.input, expected: turn.output, ...(item.metadata ? { metadata: item.metadata } : {}), source: { session_id, turn_id } });
      continue;
    }
    if (typeof item.input !== "string") {
      const j = item.input.findIndex((p) => p.type === "file" && p.file_id !== undefined);
      if (j >= 0)
        throw ApiError.validation([
          { path: `items.${i}.input.${j}.file_id`, reason: "a dataset's files go inline (data) or by url: a file id belongs to one session" },
        ]);
    }
    out.push(item);
  }
  return out;
}

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return `sha256:${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export const datasets = router()
  .openapi(route(ops.putDataset), async (c) => {
    const { name } = c.req.valid("param");
    checkName(name);
    const items = await resolveItems(c.env, c.req.valid("json").items);
    const { created, dataset } = await datasetStore(c.env).putDataset(name, items, await sha256(canonicalJson(items)), c.get("keyHash"));
    return c.json(dataset, created ? 201 : 200);
  })
  .openapi(route(ops.listDatasets), async (c) => c.json({ datasets: await datasetStore(c.env).datasets() }, 200))
  .openapi(route(ops.getDataset), async (c) => {
    const { name } = c.req.valid("param");
    const raw = c.req.valid("query").version;
    const version = raw === undefined ? undefined : intParam("version", raw, { min: 1, max: 999_999_999 });
    const found = await datasetStore(c.env).dataset(name, version);
    if (!found) throw ApiError.notFound("Dataset", version === undefined ? name : `${name}@${version}`);
    return c.json(found, 200);
  })
  .openapi(route(ops.deleteDataset), async (c) => {
    const { name } = c.req.valid("param");
    if (!(await datasetStore(c.env).removeDataset(name))) throw ApiError.notFound("Dataset", name);
    return c.json({ deleted: true as const, name }, 200);
  });
