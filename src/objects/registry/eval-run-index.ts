// The eval runs' index, a table of the registry object: which runs exist of which agent version on which
// dataset version, and each finished run's summary (what a label's gate reads). A run's cases live in its object.
import type { EvalRun } from "../../protocol/evals";

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
      run.dataset.name,
      run.dataset.version,
      run.status,
      run.status === "completed" ? JSON.stringify(run) : null,
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

  list(agent?: string): EvalRunEntry[] {
    const q = agent
      ? this.sql.exec<Row>("SELECT * FROM eval_runs WHERE agent = ? ORDER BY created_at DESC LIMIT 100", agent)
      : this.sql.exec<Row>("SELECT * FROM eval_runs ORDER BY created_at DESC LIMIT 100");
    return q.toArray().map(entry);
  }
}
