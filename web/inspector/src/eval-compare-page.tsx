// Two eval runs compared (POST /v1/evals/compare): run b against baseline a over the cases both finished, per
// scorer b's wins, losses and ties and both means, and b's cost and latency over a's.
import type { InspectorClient } from "./api";
import { Summary } from "./eval-run-page";
import { evalPath, followLink } from "./router";
import { ErrorText, Section, TableHead, useLoad } from "./ui";

const ratio = (r: number | null) => (r === null ? "—" : `×${r.toFixed(2)}`);

export function EvalComparePage({ client, a, b }: { client: InspectorClient; a: string; b: string }) {
  const cmp = useLoad(() => client.compareEvalRuns(a, b), [client, a, b]);
  const runA = useLoad(() => client.getEvalRun(a), [client, a]);
  const runB = useLoad(() => client.getEvalRun(b), [client, b]);
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
      <ErrorText error={runA.error ?? runB.error} />
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
