// A resource (an end user or account, docs/guides/memory.md): its working memory, which can be edited as
// JSON (PUT, the server's 422 shown; as the agent the page was opened for, so that agent's schema applies), and a
// search over its recall index (the earlier turns of its sessions), each hit linking to its session.
import { useEffect, useState } from "preact/hooks";
import type { RecallSearch, RuntimeClient, WorkingMemory } from "../../../src/client/index";
import { clock, describeError, pretty } from "./format";
import { followLink, sessionPath } from "./router";
import { ErrorText, Section, useAction } from "./ui";

/** `agent`: whose `memory.working` applies (its scope, schema and template); null: the resource's own document. */
export function ResourcePage({ client, rid, agent }: { client: RuntimeClient; rid: string; agent: string | null }) {
  return (
    <div class="resource">
      <h1>
        Resource <code class="id">{rid}</code>
      </h1>
      <Memory client={client} rid={rid} agent={agent ?? undefined} />
      <Recall client={client} rid={rid} />
    </div>
  );
}

function Memory({ client, rid, agent }: { client: RuntimeClient; rid: string; agent: string | undefined }) {
  const [memory, setMemory] = useState<WorkingMemory | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [draft, setDraft] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const save = useAction();
  useEffect(() => {
    client.getMemory(rid, agent).then(setMemory, (err) => setLoadError(describeError(err)));
  }, [client, rid, agent]);

  const submit = async (e: Event) => {
    e.preventDefault();
    let document: unknown;
    try {
      document = JSON.parse(draft ?? "");
    } catch (err) {
      return setProblem(`Working memory: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
    }
    if (!document || typeof document !== "object" || Array.isArray(document)) return setProblem("Working memory: must be a JSON object");
    setProblem(null);
    await save.run(async () => {
      setMemory(await client.putMemory(rid, document as Record<string, unknown>, agent));
      setDraft(null);
    });
  };

  return (
    <Section title="Working memory" id="memory-title">
      {loadError && <ErrorText error={loadError} />}
      {memory && draft === null && (
        <>
          <p class="meta">
            {agent && `as agent ${agent} · `}version {memory.version}
            {memory.updated_at !== null && ` · updated ${clock(memory.updated_at)}`}
          </p>
          <pre class="memory-document">{pretty(memory.document)}</pre>
          <button type="button" class="quiet" onClick={() => setDraft(pretty(memory.document))}>
            Edit
          </button>
        </>
      )}
      {draft !== null && (
        <form onSubmit={submit} aria-label="Edit working memory">
          <label for="memory-draft">Working memory (JSON)</label>
          <textarea id="memory-draft" class="args-editor" rows={8} spellcheck={false} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
          <div class="buttons">
            <button type="submit" disabled={save.busy}>
              Save
            </button>
            <button type="button" class="quiet" onClick={() => setDraft(null)}>
              Cancel
            </button>
          </div>
          <ErrorText error={problem ?? save.error} />
        </form>
      )}
    </Section>
  );
}

function Recall({ client, rid }: { client: RuntimeClient; rid: string }) {
  const [q, setQ] = useState("");
  const [result, setResult] = useState<RecallSearch | null>(null);
  const search = useAction();
  return (
    <Section title="Recall" id="recall-title">
      <form
        class="inline"
        aria-label="Search recall"
        onSubmit={(e) => {
          e.preventDefault();
          if (q.trim()) void search.run(async () => setResult(await client.searchMemory(rid, q.trim(), 20)));
        }}
      >
        <label for="recall-q">Search earlier conversations</label>
        <input id="recall-q" type="search" maxLength={500} value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <button type="submit" disabled={search.busy || !q.trim()}>
          Search
        </button>
      </form>
      <ErrorText error={search.error} />
      {result &&
        (result.hits.length === 0 ? (
          <p class="empty">No matches.</p>
        ) : (
          <ol class="hits" aria-label="Matches">
            {result.hits.map((h) => (
              <li key={`${h.turn_id}-${h.role}`}>
                <p>{h.snippet}</p>
                <p class="meta">
                  {h.role} · {clock(h.at)} ·{" "}
                  <a href={sessionPath(h.session_id)} onClick={followLink}>
                    session <code>{h.session_id}</code>
                  </a>
                </p>
              </li>
            ))}
          </ol>
        ))}
    </Section>
  );
}
