// An eval run (docs/guides/evals.md): its progress while it runs (read again each second), the aggregates per
// scorer, and a row per case (scores with reasons, cost, latency, steps, its session) that opens on the
// expected and actual output side by side with their diff; and a form to compare it with another run.
import { useEffect } from "preact/hooks";
import type { EvalRun } from "../../../src/client/index";
import type { EvalCases, InspectorClient } from "./api";
import { duration, plural, pretty, preview, usd } from "./format";
import { agentPath, comparePath, evalPath, followLink, navigate, sessionPath } from "./router";
import { ErrorText, IdForm, Section, TableHead, useLoad } from "./ui";

const POLL_MS = 1000;
const pct = (n: number) => `${Math.round(n * 100)}%`;
type Case = EvalCases["cases"][number];

export function EvalRunPage({ client, id }: { client: InspectorClient; id: string }) {
  const run = useLoad(() => client.getEvalRun(id), [client, id]);
  const cases = useLoad(() => client.listEvalCases(id), [client, id]);
  const running = run.value?.status === "running";
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => {
      run.reload();
      cases.reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [running]);
  // The run's last read may say completed before its cases did: read them once more.
  useEffect(() => {
    if (run.value?.status === "completed") cases.reload();
  }, [run.value?.status]);

  return (
    <div class="eval-run">
      <h1>
        Eval run <code class="id">{id}</code>
      </h1>
      <ErrorText error={run.error} />
      {run.value && <Summary run={run.value} />}
      {run.value && <Aggregates run={run.value} />}
      <Section title="Cases" id="cases-title" class="eval-cases">
        <ErrorText error={cases.error} />
        {cases.value && <CaseTable cases={cases.value.cases} />}
      </Section>
      <CompareForm id={id} />
    </div>
  );
}

/** A run's progress and totals; `title` names it when a page shows two (its id then links to its page). */
export function Summary({ run, title }: { run: EvalRun; title?: string }) {
  const { total, done, running } = run.progress;
  return (
    <Section title={title ?? "Run"} id={`run-${run.id}-title`} class="eval-summary">
      {title && (
        <p>
          <a href={evalPath(run.id)} onClick={followLink}>
            <code>{run.id}</code>
          </a>
        </p>
      )}
      <p class="meta" data-testid="run-meta">
        agent{" "}
        <a href={agentPath(run.agent, run.version)} onClick={followLink}>
          {run.agent} v{run.version}
        </a>{" "}
        · {run.dataset ? `dataset ${run.dataset.name} v${run.dataset.version}` : "recorded turns"} · concurrency {run.concurrency} · started{" "}
        {new Date(run.created_at).toLocaleString()}
        {run.created_by && ` by ${run.created_by}`}
      </p>
      <p class="eval-progress">
        <span class={`badge status-${run.status}`} data-status={run.status}>
          {run.status}
        </span>{" "}
        <progress max={Math.max(1, total)} value={done} aria-label="Cases done" />{" "}
        <span data-testid="run-progress">
          {done} of {total} cases done{running > 0 && `, ${running} running`}
        </span>
      </p>
      <p class="meta">
        {run.cost_usd === null ? "cost unknown" : `cost ${usd(run.cost_usd)}`} · mean latency{" "}
        {run.mean_latency_ms === null ? "—" : duration(run.mean_latency_ms)}
      </p>
    </Section>
  );
}

function Aggregates({ run }: { run: EvalRun }) {
  const rows = Object.entries(run.aggregates);
  if (rows.length === 0) return null;
  return (
    <Section title="Scores" id="aggregates-title" class="eval-aggregates">
      <table aria-labelledby="aggregates-title">
        <TableHead columns={["Scorer", "Mean", "Pass rate", "Cases"]} />
        <tbody>
          {rows.map(([scorer, a]) => (
            <tr key={scorer} data-scorer={scorer}>
              <th scope="row">{scorer}</th>
              <td>{a.mean.toFixed(2)}</td>
              <td>{pct(a.pass_rate)}</td>
              <td>{a.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

function CaseTable({ cases }: { cases: Case[] }) {
  if (cases.length === 0) return <p class="empty">No cases.</p>;
  return (
    <ol class="case-list" aria-label="Cases">
      {cases.map((c) => (
        <CaseRow key={c.index} c={c} />
      ))}
    </ol>
  );
}

function CaseRow({ c }: { c: Case }) {
  return (
    <li class={`eval-case case-${c.status}`} data-index={c.index} data-status={c.status}>
      <details>
        <summary>
          <span class="case-index">#{c.index}</span> <span class="case-input">{preview(c.input, 80)}</span>{" "}
          {c.scores.map((s) => (
            <span key={s.scorer} class={`badge score ${s.pass ? "pass" : "fail"}`} data-scorer={s.scorer}>
              {s.scorer} {s.score.toFixed(2)} {s.pass ? "✓" : "✗"}
            </span>
          ))}
          <span class="meta case-numbers">
            {c.status !== "done"
              ? c.status
              : [usd(c.cost_usd ?? null), c.latency_ms !== undefined && duration(c.latency_ms), c.steps !== undefined && plural(c.steps, "step")]
                  .filter(Boolean)
                  .join(" · ")}
          </span>
        </summary>
        <CaseDetails c={c} />
      </details>
    </li>
  );
}

function CaseDetails({ c }: { c: Case }) {
  return (
    <div class="case-details">
      {c.error && <p class="error">{c.error}</p>}
      {c.scores.length > 0 && (
        <ul class="reasons" aria-label={`Scores of case ${c.index}`}>
          {c.scores.map((s) => (
            <li key={s.scorer} data-scorer={s.scorer}>
              <strong>{s.scorer}</strong> {s.score.toFixed(2)} {s.pass ? "pass" : "fail"}: {s.reason}
            </li>
          ))}
        </ul>
      )}
      <div class="side-by-side">
        <div>
          <h4>Expected</h4>
          <pre data-testid="case-expected">{c.expected === undefined ? "—" : pretty(c.expected)}</pre>
        </div>
        <div>
          <h4>Output</h4>
          <pre data-testid="case-output">{c.output === undefined ? "—" : pretty(c.output)}</pre>
        </div>
      </div>
      {c.diff !== undefined && <Diff text={c.diff} />}
      <p class="meta">
        {c.session_id && (
          <a href={sessionPath(c.session_id)} onClick={followLink}>
            session <code>{c.session_id}</code>
          </a>
        )}
        {c.turn_status && ` · turn ${c.turn_status}`}
        {c.scoring_cost_usd !== undefined && ` · judges ${usd(c.scoring_cost_usd)}`}
        {c.tool_calls && c.tool_calls.length > 0 && ` · tools ${c.tool_calls.map((t) => t.name).join(", ")}`}
      </p>
    </div>
  );
}

/** A unified line diff, its added and removed lines marked. */
function Diff({ text }: { text: string }) {
  if (text === "") return <p class="meta">Output equals the expected answer.</p>;
  return (
    <pre class="line-diff" data-testid="case-diff">
      {text.split("\n").map((line, i) => (
        <span key={i} class={line.startsWith("+") ? "added" : line.startsWith("-") ? "removed" : undefined}>
          {line}
          {"\n"}
        </span>
      ))}
    </pre>
  );
}

function CompareForm({ id }: { id: string }) {
  return (
    <Section title="Compare" id="compare-title">
      <IdForm
        field="compare-with"
        label="Baseline run id"
        button="Compare"
        name="Compare with another run"
        onGo={(other) => navigate(comparePath(other, id))}
      />
      <p class="hint">This run is scored against the baseline: a win is a case where this run scored higher.</p>
    </Section>
  );
}
