// Two eval runs compared (POST /v1/evals/compare): run b against baseline a over the cases both finished, per
// scorer b's wins, losses and ties and both means, and b's cost and latency over a's; then each case both
// finished, its scores in both runs and, opened, both outputs side by side.
import type { EvalCases, InspectorClient } from "./api";
import { Summary } from "./eval-run-page";
import { pretty, preview } from "./format";
import { evalPath, followLink, sessionPath } from "./router";
import { ErrorText, Section, TableHead, useLoad } from "./ui";

const ratio = (r: number | null) => (r === null ? "—" : `×${r.toFixed(2)}`);

export function EvalComparePage({ client, a, b }: { client: InspectorClient; a: string; b: string }) {
  const cmp = useLoad(() => client.compareEvalRuns(a, b), [client, a, b]);
  const runA = useLoad(() => client.getEvalRun(a), [client, a]);
  const runB = useLoad(() => client.getEvalRun(b), [client, b]);
  const casesA = useLoad(() => client.listEvalCases(a), [client, a]);
  const casesB = useLoad(() => client.listEvalCases(b), [client, b]);
  const c = cmp.value;
  return (
    <div class="eval-compare">
      <h1>
        Run <RunLink id={b} /> against <RunLink id={a} />
      </h1>
      <ErrorText error={cmp.error} />
      {c && (
        <Section title="Per scorer" id="comparison-title" class="comparison">
          <p class="meta" data-testid="comparison-meta">
            {c.shared_cases} shared cases · cost {ratio(c.cost_ratio)} · latency {ratio(c.latency_ratio)}
          </p>
          <table aria-labelledby="comparison-title">
            <TableHead columns={["Scorer", "Baseline mean", "Mean", "Win", "Lose", "Tie"]} />
            <tbody>
              {Object.entries(c.scorers).map(([scorer, s]) => (
                <tr key={scorer} data-scorer={scorer} class={s.win > s.lose ? "better" : s.lose > s.win ? "worse" : undefined}>
                  <th scope="row">{scorer}</th>
                  <td>{s.a_mean.toFixed(2)}</td>
                  <td>{s.b_mean.toFixed(2)}</td>
                  <td class="win">{s.win}</td>
                  <td class="lose">{s.lose}</td>
                  <td>{s.tie}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
      {casesA.value && casesB.value && <Pairs a={casesA.value.cases} b={casesB.value.cases} />}
      <ErrorText error={runA.error ?? runB.error ?? casesA.error ?? casesB.error} />
      <div class="compare-runs">
        {runA.value && <Summary run={runA.value} title="Baseline run" />}
        {runB.value && <Summary run={runB.value} title="Compared run" />}
      </div>
    </div>
  );
}

function RunLink({ id }: { id: string }) {
  return (
    <a href={evalPath(id)} onClick={followLink}>
      <code>{id}</code>
    </a>
  );
}

type Case = EvalCases["cases"][number];

/** The cases both runs finished, by dataset index: each scorer's score in a, then in b. */
function Pairs({ a, b }: { a: Case[]; b: Case[] }) {
  const done = (list: Case[]) => new Map(list.filter((c) => c.status === "done").map((c) => [c.index, c]));
  const inB = done(b);
  const pairs = [...done(a).values()].flatMap((ca) => (inB.has(ca.index) ? [[ca, inB.get(ca.index)!] as const] : []));
  if (pairs.length === 0) return null;
  return (
    <Section title="Cases side by side" id="pairs-title" class="pairs">
      <ol class="case-list" aria-labelledby="pairs-title">
        {pairs.map(([ca, cb]) => (
          <li key={ca.index} class="eval-case" data-index={ca.index}>
            <details>
              <summary>
                <span class="case-index">#{ca.index}</span> <span class="case-input">{preview(ca.input, 80)}</span>{" "}
                {ca.scores.map((sa) => {
                  const sb = cb.scores.find((s) => s.scorer === sa.scorer);
                  const tone = !sb || sb.score === sa.score ? "" : sb.score > sa.score ? " pass" : " fail";
                  return (
                    <span key={sa.scorer} class={`badge score${tone}`} data-scorer={sa.scorer}>
                      {sa.scorer} {sa.score.toFixed(2)} → {sb ? sb.score.toFixed(2) : "—"}
                    </span>
                  );
                })}
              </summary>
              <p class="meta">expected: {ca.expected === undefined ? "—" : preview(ca.expected)}</p>
              <div class="side-by-side">
                <Output label="Baseline" c={ca} />
                <Output label="Compared" c={cb} />
              </div>
            </details>
          </li>
        ))}
      </ol>
    </Section>
  );
}

function Output({ label, c }: { label: string; c: Case }) {
  return (
    <div>
      <h4>
        {label}{" "}
        {c.session_id && (
          <a href={sessionPath(c.session_id)} onClick={followLink}>
            session
          </a>
        )}
      </h4>
      <pre data-testid={`pair-${label.toLowerCase()}`}>{c.output === undefined ? (c.error ?? "—") : pretty(c.output)}</pre>
    </div>
  );
}
