// An agent's versions (docs/guides/versions.md): each immutable version with its hash, time and author, the
// labels pointing at them with their moves, how new sessions split between labels, a chosen version's config,
// and what changed between two chosen versions, path by path.
import { useState } from "preact/hooks";
import type { InspectorClient } from "./api";
import { pretty, shortHash } from "./format";
import { agentPath, followLink } from "./router";
import { ErrorText, Section, TableHead, useLoad } from "./ui";

const stamp = (ms: number) => new Date(ms).toLocaleString();

export function AgentPage({ client, agent, version }: { client: InspectorClient; agent: string; version: number | null }) {
  const versions = useLoad(() => client.listAgentVersions(agent), [client, agent]);
  const labels = useLoad(() => client.listAgentLabels(agent), [client, agent]);
  const list = versions.value?.versions ?? [];
  const chosen = version ?? list[0]?.version ?? null;
  const labelsOf = (v: number) => (labels.value?.labels ?? []).filter((l) => l.version === v).map((l) => l.label);
  return (
    <div class="agent-page">
      <h1>
        Agent <code class="id">{agent}</code>
      </h1>
      <Section title="Versions" id="versions-title" class="versions">
        <ErrorText error={versions.error} />
        {list.length > 0 && (
          <table aria-labelledby="versions-title">
            <TableHead columns={["Version", "Hash", "Created", "By", "Labels"]} />
            <tbody>
              {list.map((v) => (
                <tr key={v.version} data-version={v.version} aria-current={v.version === chosen ? "true" : undefined}>
                  <td>
                    <a href={agentPath(agent, v.version)} onClick={followLink}>
                      v{v.version}
                    </a>
                  </td>
                  <td>
                    <code title={v.content_hash}>{shortHash(v.content_hash)}</code>
                  </td>
                  <td>{stamp(v.created_at)}</td>
                  <td>{v.created_by ?? "—"}</td>
                  <td>
                    {labelsOf(v.version).map((l) => (
                      <span key={l} class="badge label">
                        {l}
                      </span>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
      <Labels client={client} agent={agent} labels={labels.value?.labels ?? null} error={labels.error} />
      {chosen !== null && list.length > 1 && <Diff key={chosen} client={client} agent={agent} version={chosen} versions={list.map((v) => v.version)} />}
      {chosen !== null && <Config client={client} agent={agent} version={chosen} />}
    </div>
  );
}

type Label = NonNullable<Awaited<ReturnType<InspectorClient["listAgentLabels"]>>>["labels"][number];

function Labels({ client, agent, labels, error }: { client: InspectorClient; agent: string; labels: Label[] | null; error: string | null }) {
  const traffic = useLoad(() => client.getAgentTraffic(agent), [client, agent]);
  const routes = traffic.value?.routes ?? [];
  const total = routes.reduce((s, r) => s + r.weight, 0);
  return (
    <Section title="Labels and traffic" id="labels-title" class="labels">
      <ErrorText error={error ?? traffic.error} />
      {labels && labels.length === 0 && <p class="empty">No labels: sessions opened by the agent's name run its newest version.</p>}
      {labels && labels.length > 0 && (
        <ul class="label-list" aria-label="Labels">
          {labels.map((l) => (
            <li key={l.label} data-label={l.label}>
              <strong>{l.label}</strong> → v{l.version}{" "}
              <span class="meta">
                moved {stamp(l.moved_at)}
                {l.moved_by && ` by ${l.moved_by}`}
              </span>
              {l.history.length > 1 && (
                <ol class="label-history" aria-label={`Moves of ${l.label}`}>
                  {l.history.map((h) => (
                    <li key={h.moved_at}>
                      {h.from_version === null ? "set to" : `v${h.from_version} →`} v{h.version} · {stamp(h.moved_at)}
                      {h.moved_by && ` by ${h.moved_by}`}
                    </li>
                  ))}
                </ol>
              )}
            </li>
          ))}
        </ul>
      )}
      {traffic.value && (
        <>
          <h3>Traffic</h3>
          {routes.length === 0 ? (
            <p class="empty">No split: new sessions run the newest version.</p>
          ) : (
            <ul class="traffic" aria-label="Traffic split">
              {routes.map((r) => (
                <li key={r.label} data-label={r.label}>
                  <span class="traffic-label">{r.label}</span>{" "}
                  <span class="traffic-bar" aria-hidden="true">
                    <span style={{ width: `${(100 * r.weight) / Math.max(1, total)}%` }} />
                  </span>{" "}
                  <span class="traffic-share">
                    weight {r.weight} · {Math.round((100 * r.weight) / Math.max(1, total))}%
                  </span>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </Section>
  );
}

function Diff({ client, agent, version, versions }: { client: InspectorClient; agent: string; version: number; versions: number[] }) {
  // The chosen version against the one before it; the first version: the next one against it.
  const older = versions.find((v) => v < version);
  const [to, setTo] = useState(older === undefined ? (versions.findLast((v) => v > version) ?? version) : version);
  const [against, setAgainst] = useState(older ?? version);
  const diff = useLoad(() => (to === against ? Promise.resolve(null) : client.diffAgentVersions(agent, to, against)), [client, agent, to, against]);
  return (
    <Section title="Diff" id="diff-title" class="diff">
      <form class="inline" aria-label="Versions to compare" onSubmit={(e) => e.preventDefault()}>
        <label for="diff-against">From</label>
        <VersionSelect id="diff-against" value={against} versions={versions} onPick={setAgainst} />
        <label for="diff-to">to</label>
        <VersionSelect id="diff-to" value={to} versions={versions} onPick={setTo} />
      </form>
      <ErrorText error={diff.error} />
      {to === against && <p class="empty">Choose two different versions.</p>}
      {diff.value && diff.value.changes.length === 0 && <p class="empty">No changes.</p>}
      {diff.value && diff.value.changes.length > 0 && (
        <table class="changes" aria-label={`Changes from v${diff.value.against} to v${diff.value.version}`}>
          <TableHead columns={["Path", "Change", `v${diff.value.against}`, `v${diff.value.version}`]} />
          <tbody>
            {diff.value.changes.map((c) => (
              <tr key={c.path} class={`change-${c.change}`} data-path={c.path}>
                <td>
                  <code>{c.path}</code>
                </td>
                <td>{c.change}</td>
                <td>{c.before !== undefined && <pre class="before">{pretty(c.before)}</pre>}</td>
                <td>{c.after !== undefined && <pre class="after">{pretty(c.after)}</pre>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

function VersionSelect({ id, value, versions, onPick }: { id: string; value: number; versions: number[]; onPick(v: number): void }) {
  return (
    <select id={id} value={value} onChange={(e) => onPick(Number(e.currentTarget.value))}>
      {versions.map((v) => (
        <option key={v} value={v}>
          v{v}
        </option>
      ))}
    </select>
  );
}

function Config({ client, agent, version }: { client: InspectorClient; agent: string; version: number }) {
  const got = useLoad(() => client.getAgentVersion(agent, version), [client, agent, version]);
  return (
    <Section title={`Version ${version}`} id="config-title" class="config">
      <ErrorText error={got.error} />
      {got.value && (
        <>
          <p class="meta">
            hash <code>{got.value.content_hash}</code> · {stamp(got.value.created_at)}
            {got.value.created_by && ` · by ${got.value.created_by}`}
          </p>
          <pre data-testid="version-config">{pretty(got.value.config)}</pre>
        </>
      )}
    </Section>
  );
}
