// An eval run's SQLite (migrations/eval): the run as requested, and each case's state and result. A case
// records its session before the session is opened, so a restart watches that session again.
import { aggregates, totals } from "../../engine/evals/aggregate";
import type { AgentConfig } from "../../protocol/agent-config";
import type { DatasetItem } from "../../protocol/datasets";
import type { EvalCase, EvalRun, RecordedFilter, ScorerConfig } from "../../protocol/evals";

/** What a run keeps of its request: the agent version's config is resolved once, at its start. */
export interface RunSpec {
  id: string;
  agent: string;
  version: number;
  /** The dataset version the cases came from, or null for recorded turns (each item then has its source). */
  dataset: { name: string; version: number } | null;
  recorded?: RecordedFilter;
  scorers: ScorerConfig[];
  concurrency: number;
  config: AgentConfig;
  /** Who started it: its cases' turns are submitted as them. */
  by: string;
}

interface CaseRow {
  idx: number;
  item: string;
  status: EvalCase["status"];
  session_id: string | null;
  turn_id: string | null;
  result: string | null;
  [key: string]: SqlStorageValue;
}

/** What a finished case adds to its row. */
export type CaseOutcome = Omit<EvalCase, "index" | "status" | "session_id" | "turn_id" | "input" | "expected">;

export class EvalRunStore {
  constructor(private readonly sql: SqlStorage) {}

  create(spec: RunSpec, items: DatasetItem[], createdBy: string | null, now: number): void {
    this.sql.exec("INSERT INTO run (id, spec, created_at, created_by) VALUES (?, ?, ?, ?)", spec.id, JSON.stringify(spec), now, createdBy);
    for (const [i, item] of items.entries()) this.sql.exec("INSERT INTO cases (idx, item, status) VALUES (?, ?, 'pending')", i, JSON.stringify(item));
  }

  spec(): RunSpec | null {
    const row = this.sql.exec<{ spec: string }>("SELECT spec FROM run").toArray()[0];
    return row ? (JSON.parse(row.spec) as RunSpec) : null;
  }

  finished(): boolean {
    return this.sql.exec<{ finished_at: number | null }>("SELECT finished_at FROM run").toArray()[0]?.finished_at != null;
  }

  finish(now: number): void {
    this.sql.exec("UPDATE run SET finished_at = ? WHERE finished_at IS NULL", now);
  }

  rows(status?: EvalCase["status"]): CaseRow[] {
    return (
      status ? this.sql.exec<CaseRow>("SELECT * FROM cases WHERE status = ? ORDER BY idx", status) : this.sql.exec<CaseRow>("SELECT * FROM cases ORDER BY idx")
    ).toArray();
  }

  item(idx: number): DatasetItem {
    return JSON.parse(this.sql.exec<{ item: string }>("SELECT item FROM cases WHERE idx = ?", idx).one().item) as DatasetItem;
  }

  /** The case is running in session `sid` (recorded before the session is opened). */
  started(idx: number, sid: string): void {
    this.sql.exec("UPDATE cases SET status = 'running', session_id = ? WHERE idx = ?", sid, idx);
  }

  submitted(idx: number, turnId: string): void {
    this.sql.exec("UPDATE cases SET turn_id = ? WHERE idx = ?", turnId, idx);
  }

  /** The case's outcome, unless the run was cancelled meanwhile (the case stays cancelled); whether it was recorded. */
  done(idx: number, outcome: CaseOutcome): boolean {
    return this.sql.exec("UPDATE cases SET status = 'done', result = ? WHERE idx = ? AND status = 'running'", JSON.stringify(outcome), idx).rowsWritten > 0;
  }

  cancelled(): boolean {
    return this.sql.exec<{ cancelled_at: number | null }>("SELECT cancelled_at FROM run").toArray()[0]?.cancelled_at != null;
  }

  /** Cancels the run: cases not ended are cancelled; answers those that were running (their turns to interrupt). */
  cancel(now: number): CaseRow[] {
    const running = this.rows("running");
    this.sql.exec("UPDATE run SET cancelled_at = ?, finished_at = ? WHERE finished_at IS NULL", now, now);
    this.sql.exec("UPDATE cases SET status = 'cancelled' WHERE status IN ('pending', 'running')");
    return running;
  }

  cases(): EvalCase[] {
    return this.rows().map((r) => {
      const item = JSON.parse(r.item) as DatasetItem;
      const outcome = r.result ? (JSON.parse(r.result) as CaseOutcome) : { scores: [] };
      const expected = item.expected === undefined ? {} : { expected: item.expected };
      return { index: r.idx, status: r.status, session_id: r.session_id, turn_id: r.turn_id, input: item.input, ...expected, ...outcome };
    });
  }

  view(): EvalRun | null {
    const spec = this.spec();
    const run = this.sql
      .exec<{ created_at: number; created_by: string | null; finished_at: number | null; cancelled_at: number | null }>("SELECT * FROM run")
      .toArray()[0];
    if (!spec || !run) return null;
    const cases = this.cases();
    const done = cases.filter((c) => c.status === "done");
    const progress = { total: cases.length, done: done.length, running: cases.filter((c) => c.status === "running").length };
    const judged = done.reduce((sum, c) => sum + (c.scoring_cost_usd ?? 0), 0);
    const t = totals(done);
    return {
      id: spec.id,
      agent: spec.agent,
      version: spec.version,
      dataset: spec.dataset,
      ...(spec.recorded ? { recorded: spec.recorded } : {}),
      scorers: spec.scorers,
      concurrency: spec.concurrency,
      status: run.cancelled_at !== null ? "cancelled" : run.finished_at === null ? "running" : "completed",
      progress,
      aggregates: aggregates(done),
      cost_usd: t.cost_usd === null ? null : Math.round((t.cost_usd + judged) * 1e9) / 1e9,
      mean_latency_ms: t.mean_latency_ms,
      created_at: run.created_at,
      created_by: run.created_by,
      finished_at: run.finished_at,
    };
  }
}
