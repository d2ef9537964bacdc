// The registry's datasets and eval-run index as one RPC of the registry object (`evals(op, ...args)`), typed
// for callers by evalsOf (as agent-versions-rpc.ts does for versions).
import type { DatasetItem } from "../../protocol/datasets";
import type { EvalRun } from "../../protocol/evals";
import { DatasetTable } from "./dataset-table";
import { EvalRunIndex } from "./eval-run-index";

export function evalsRpc(sql: SqlStorage) {
  const datasets = new DatasetTable(sql);
  const runs = new EvalRunIndex(sql);
  return {
    putDataset: (name: string, items: DatasetItem[], hash: string, by: string | null) => datasets.put(name, items, hash, by, Date.now()),
    dataset: (name: string, version?: number) => datasets.get(name, version),
    datasets: () => datasets.list(),
    removeDataset: (name: string) => datasets.remove(name),
    recordRun: (run: EvalRun) => runs.record(run),
    newestFinishedRun: (agent: string, version: number, dataset: string, datasetVersion: number) =>
      runs.newestFinished(agent, version, dataset, datasetVersion),
  };
}
export type EvalsRpc = ReturnType<typeof evalsRpc>;

export type EvalsClient = { [K in keyof EvalsRpc]: (...args: Parameters<EvalsRpc[K]>) => Promise<ReturnType<EvalsRpc[K]>> };
const OPS: (keyof EvalsRpc)[] = ["putDataset", "dataset", "datasets", "removeDataset", "recordRun", "newestFinishedRun"];

export function evalsOf(stub: { evals(op: keyof EvalsRpc, args: unknown[]): Promise<unknown> }): EvalsClient {
  return Object.fromEntries(OPS.map((op) => [op, (...args: unknown[]) => stub.evals(op, args)])) as EvalsClient;
}
