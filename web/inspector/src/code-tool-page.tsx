// A code tool (docs/guides/code-tools.md) at one of its versions: its source, description, input schema,
// limits, hosts and secret names (never their values), with links to its other versions (numbered from 1 to
// the latest, each PUT that changed it adding one).
import type { InspectorClient } from "./api";
import { duration, pretty, shortHash } from "./format";
import { codeToolPath, followLink } from "./router";
import { ErrorText, Section, useLoad } from "./ui";

export function CodeToolPage({ client, tool, version }: { client: InspectorClient; tool: string; version: number | null }) {
  const latest = useLoad(() => client.getCodeTool(tool, null), [client, tool]);
  const shown = useLoad(() => client.getCodeTool(tool, version), [client, tool, version]);
  const t = shown.value;
  const newest = latest.value?.version ?? 0;
  return (
    <div class="code-tool">
      <h1>
        Code tool <code class="id">{tool}</code>
        {t && (
          <>
            {" "}
            <span class="badge code-tool" data-testid="code-tool-version">
              v{t.version}
            </span>
          </>
        )}
      </h1>
      <ErrorText error={shown.error} />
      {newest > 1 && (
        <nav aria-label="Versions" class="versions-nav">
          Versions:{" "}
          {Array.from({ length: newest }, (_, i) => newest - i).map((v) => (
            <a key={v} href={codeToolPath(tool, v)} onClick={followLink} aria-current={t?.version === v ? "page" : undefined}>
              v{v}
              {v === newest && " (latest)"}
            </a>
          ))}
        </nav>
      )}
      {t && (
        <>
          <Section title="Source" id="source-title">
            <p class="meta">
              stored {new Date(t.created_at).toLocaleString()} · hash <code title={t.hash}>{shortHash(t.hash)}</code>
              {t.version < newest && ` · latest is v${newest}`}
            </p>
            <pre class="source" data-testid="code-tool-source">
              <code>{t.source}</code>
            </pre>
          </Section>
          <Section title="Definition" id="definition-title">
            <p>{t.description}</p>
            <dl class="details">
              <dt>Input schema</dt>
              <dd>
                <pre>{pretty(t.input_schema)}</pre>
              </dd>
              <dt>Limits</dt>
              <dd>
                wall {duration(t.timeout_ms)} · CPU {duration(t.cpu_ms)}
              </dd>
              <dt>Hosts it may reach</dt>
              <dd>{t.allowed_hosts.length > 0 ? t.allowed_hosts.join(", ") : "none (no network)"}</dd>
              <dt>Secrets</dt>
              <dd>{t.secrets.length > 0 ? t.secrets.join(", ") : "none"}</dd>
            </dl>
          </Section>
        </>
      )}
    </div>
  );
}
