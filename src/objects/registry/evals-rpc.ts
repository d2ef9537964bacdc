// The registry's datasets and eval-run index as one RPC of the registry object (`evals(op, ...args)`), typed
// for callers by evalsOf (as agent-versions-rpc.ts does for versions).
import type { DatasetItem } from "../../protocol/datasets";
import type { EvalRun } from "../../protocol/evals";
import { DatasetTable } from "./dataset-table";
import { EvalLeases } from "./eval-leases";
import { EvalRunIndex, type EvalRunQuery } from "./eval-run-index";
import { type ScoreNotice, VersionScores } from "./version-scores";

/**
 * What the leases need of the registry object: the deployment's cap, and a way to tell waiting runs that a lease
 * is free for them (their objects, reached through the EVAL_RUNS binding: nothing of objects/evals is imported).
 */
export interface LeasePorts {
  cap: number;
  wake(runIds: string[]): void;
}

export function evalsRpc(sql: SqlStorage, ports: LeasePorts) {
  const datasets = new DatasetTable(sql);
  const runs = new EvalRunIndex(sql);
  const leases = new EvalLeases(sql);
  const scores = new VersionScores(sql);
  /** Leases went back: the runs they now go to ask at once. */
  const freed = (runId: string) => {
    const due = leases.wakeable(ports.cap, runId, Date.now());
    if (due.length > 0) ports.wake(due);
  };
  return {
    putDataset: (name: string, items: DatasetItem[], hash: string, by: string | null) => datasets.put(name, items, hash, by, Date.now()),
    dataset: (name: string, version?: number) => datasets.get(name, version),
    datasets: () => datasets.list(),
    removeDataset: (name: string) => datasets.remove(name),
    recordRun: (run: EvalRun) => runs.record(run),
    listRuns: (q: EvalRunQuery) => runs.list(q),
    acquireLeases: (runId: string, idxs: number[], cap: number) => leases.acquire(runId, idxs, cap, Date.now()),
    /** A case ended: its lease goes back, and the run's summary is recorded (one call of the registry). */
    caseEnded: (run: EvalRun, idx: number) => {
      leases.release(run.id, idx);
      runs.record(run);
      freed(run.id);
    },
    /** The run ended (finished or cancelled): every lease it holds goes back. */
    runEnded: (run: EvalRun) => {
      leases.release(run.id);
      runs.record(run);
      freed(run.id);
    },
    /** An online score (eval.scored) of a turn of the version. */
    recordScore: (s: ScoreNotice) => scores.add(s, Date.now()),
    versionScores: (agent: string, version: number) => scores.of(agent, version),
    newestFinishedRun: (agent: string, version: number, dataset: string, datasetVersion: number) =>
      runs.newestFinished(agent, version, dataset, datasetVersion),
  };
}
export type EvalsRpc = ReturnType<typeof evalsRpc>;

export type EvalsClient = { [K in keyof EvalsRpc]: (...args: Parameters<EvalsRpc[K]>) => Promise<ReturnType<EvalsRpc[K]>> };
const OPS: (keyof EvalsRpc)[] = [
  "putDataset",
  "dataset",
  "datasets",
  "removeDataset",
  "recordRun",
  "listRuns",
  "acquireLeases",
  "caseEnded",
  "runEnded",
  "recordScore",
  "versionScores",
  "newestFinishedRun",
];

export function evalsOf(stub: { evals(op: keyof EvalsRpc, args: unknown[]): Promise<unknown> }): EvalsClient {
  return Object.fromEntries(OPS.map((op) => [op, (...args: unknown[]) => stub.evals(op, args)])) as EvalsClient;
}
