// The deployment's sessions, newest first, from GET /v1/sessions (the session index), a page at a time.
// A key or token that may not list sessions (a token bound to one session) sees no list, only a note.
import { useEffect, useState } from "preact/hooks";
import { type RuntimeClient, RuntimeError, type SessionSummary } from "../../../src/client/index";
import { count, describeError, usd } from "./format";
import { agentPath, evalPath, followLink, sessionPath } from "./router";
import { ErrorText, Section, TableHead } from "./ui";

const PAGE = 20;

export function SessionList({ client }: { client: RuntimeClient }) {
  const [rows, setRows] = useState<SessionSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [forbidden, setForbidden] = useState(false);
  const [loading, setLoading] = useState(true);

  const load = async (after: string | null) => {
    setLoading(true);
    try {
      const page = await client.listSessions({ limit: PAGE, ...(after ? { cursor: after } : {}) });
      setRows((r) => (after ? [...r, ...page.sessions] : page.sessions));
      setCursor(page.next_cursor);
      setError(null);
    } catch (err) {
      if (err instanceof RuntimeError && err.status === 403) setForbidden(true);
      else setError(describeError(err));
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    void load(null);
  }, [client]);

  if (forbidden) return null;
  return (
    <Section title="Recent sessions" id="list-title" class="session-list">
      <ErrorText error={error} />
      {!loading && rows.length === 0 && !error ? <p>No sessions yet.</p> : null}
      {rows.length > 0 ? (
        <table>
          <TableHead columns={["Session", "Agent", "Status", "Turns", "Last activity", "Cost"]} />
          <tbody>
            {rows.map((s) => (
              <tr key={s.session_id} data-sid={s.session_id}>
                <td>
                  <a href={sessionPath(s.session_id)} onClick={followLink}>
                    {s.session_id}
                  </a>
                </td>
                <td>
                  <a href={agentPath(s.agent, s.agent_version)} onClick={followLink}>
                    {s.agent}
                    {s.agent_version !== null && ` v${s.agent_version}`}
                  </a>
                  {typeof s.metadata.eval_run_id === "string" && (
                    <>
                      {" "}
                      <a class="badge" href={evalPath(s.metadata.eval_run_id)} onClick={followLink}>
                        eval
                      </a>
                    </>
                  )}
                </td>
                <td>{s.status}</td>
                <td>{count(s.turns)}</td>
                <td>{new Date(s.last_activity).toLocaleString()}</td>
                <td>{s.unpriced_model_calls > 0 ? `${usd(s.cost_usd)} + unpriced` : usd(s.cost_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {cursor ? (
        <button type="button" disabled={loading} onClick={() => void load(cursor)}>
          More sessions
        </button>
      ) : null}
    </Section>
  );
}
