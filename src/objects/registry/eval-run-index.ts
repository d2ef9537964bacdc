// The eval runs' index, a table of the registry object: which runs exist of which agent version on which
// dataset version, and each run's summary as last reported (what GET /v1/evals lists and a label's gate reads).
// A run's cases live in its object.
import type { EvalRun } from "../../protocol/evals";
import { where } from "../sql-where";

export interface EvalRunEntry {
  id: string;
  agent: string;
  version: number;
  dataset: string;
  dataset_version: number;
  status: EvalRun["status"];
  summary: EvalRun | null;
}

interface Row {
  id: string;
  agent: string;
  version: number;
  dataset: string;
  dataset_version: number;
  status: string;
  summary: string | null;
  [key: string]: SqlStorageValue;
}

const entry = (r: Row): EvalRunEntry => ({ ...r, status: r.status as EvalRun["status"], summary: r.summary ? (JSON.parse(r.summary) as EvalRun) : null });

export interface EvalRunQuery {
  agent?: string;
  status?: EvalRun["status"];
  /** The last row of the previous page: (created_at, id). */
  before?: [number, string];
  limit: number;
}

export class EvalRunIndex {
  constructor(private readonly sql: SqlStorage) {}

  /** Records a run's state (its summary when it finished); a run's first record creates its row. */
  record(run: EvalRun): void {
    this.sql.exec(
      `INSERT INTO eval_runs (id, agent, version, dataset, dataset_version, status, summary, created_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, summary = excluded.summary, finished_at = excluded.finished_at`,
      run.id,
      run.agent,
      run.version,
      // A run of recorded turns has no dataset: '' and 0, which no gate asks for.
      run.dataset?.name ?? "",
      run.dataset?.version ?? 0,
      run.status,
      JSON.stringify(run),
      run.created_at,
      run.finished_at,
    );
  }

  /** The newest finished run of the agent's version on the dataset version, if any. */
  newestFinished(agent: string, version: number, dataset: string, datasetVersion: number): EvalRunEntry | null {
    const row = this.sql
      .exec<Row>(
        "SELECT * FROM eval_runs WHERE agent = ? AND version = ? AND dataset = ? AND dataset_version = ? AND status = 'completed' ORDER BY finished_at DESC, rowid DESC LIMIT 1",
        agent,
        version,
        dataset,
        datasetVersion,
      )
      .toArray()[0];
    return row ? entry(row) : null;
  }

  /** Runs newest first (by creation, then id), after the keyset `before`, filtered by agent and status. */
  list(q: EvalRunQuery): EvalRun[] {
    const w = where();
    if (q.agent !== undefined) w.add("agent = ?", q.agent);
    if (q.status !== undefined) w.add("status = ?", q.status);
    if (q.before) w.add("(created_at < ? OR (created_at = ? AND id < ?))", q.before[0], q.before[0], q.before[1]);
    const sql = `SELECT * FROM eval_runs ${w.sql()} ORDER BY created_at DESC, id DESC LIMIT ?`;
    return this.sql
      .exec<Row>(sql, ...w.args, q.limit)
      .toArray()
      .flatMap((r) => entry(r).summary ?? []);
  }
}
