// A label move's eval gate (docs/guides/evals.md): the newest finished run of the version on the dataset
// version must reach each scorer's minimum mean score, and with max_cost_ratio cost at most that much more
// than the newest run of the version the label points at now.
import type { Env } from "../env";
import { evalsOf } from "../objects/registry/evals-rpc";
import { registry } from "../objects/registry/registry-object";
import { ApiError } from "../protocol/errors";
import type { GateRequirement } from "../protocol/evals";

type Failure =
  | { scorer: string; mean: number | null; min: number; reason: string }
  | { check: "max_cost_ratio"; ratio: number | null; max: number; reason: string };

/** Throws 409 eval_gate_failed (or 422 for a dataset that does not exist) unless `version` passes the gate. */
export async function checkGate(env: Env, agent: string, version: number, current: number | null, gate: GateRequirement): Promise<void> {
  const store = evalsOf(registry(env));
  const dataset = await store.dataset(gate.dataset, gate.dataset_version);
  if (!dataset) {
    const path = gate.dataset_version === undefined ? "require.dataset" : "require.dataset_version";
    throw ApiError.validation([
      { path, reason: `no dataset '${gate.dataset}'${gate.dataset_version === undefined ? "" : ` version ${gate.dataset_version}`}` },
    ]);
  }
  const on = { name: dataset.name, version: dataset.version };
  const where = `version ${version} of '${agent}' on dataset '${on.name}' version ${on.version}`;
  const run = await store.newestFinishedRun(agent, version, on.name, on.version);
  if (!run?.summary) {
    throw new ApiError("eval_gate_failed", `No finished eval run of ${where}: run one with POST /v1/evals`, { run_id: null, dataset: on, failures: [] });
  }
  const { summary } = run;
  const failures: Failure[] = [];
  for (const [scorer, min] of Object.entries(gate.min_scores)) {
    const mean = summary.aggregates[scorer]?.mean ?? null;
    if (mean === null) failures.push({ scorer, mean, min, reason: `run ${run.id} has no scorer '${scorer}'` });
    else if (mean < min) failures.push({ scorer, mean, min, reason: `mean score ${mean} is under ${min}` });
  }
  if (gate.max_cost_ratio !== undefined) {
    const baseline = current === null ? null : await store.newestFinishedRun(agent, current, on.name, on.version);
    const base = baseline?.summary?.cost_usd ?? null;
    const ratio = base === null || summary.cost_usd === null || base === 0 ? null : Math.round((summary.cost_usd / base) * 10_000) / 10_000;
    const max = gate.max_cost_ratio;
    if (!baseline)
      failures.push({
        check: "max_cost_ratio",
        ratio,
        max,
        reason: `no finished run of the label's current version on this dataset version to compare cost with`,
      });
    else if (ratio === null) failures.push({ check: "max_cost_ratio", ratio, max, reason: "a cost of either run is unknown or zero" });
    else if (ratio > max)
      failures.push({ check: "max_cost_ratio", ratio, max, reason: `costs ${ratio} times the current version's run (${baseline.id}), over ${max}` });
  }
  if (failures.length === 0) return;
  const named = failures.map((f) => ("scorer" in f ? f.scorer : f.check)).join(", ");
  throw new ApiError("eval_gate_failed", `Eval run ${run.id} of ${where} fails the gate: ${named}`, { run_id: run.id, dataset: on, failures });
}
