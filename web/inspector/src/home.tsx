// The sessions page: the deployment's recent sessions, open one by id, or start one with a registered agent;
// the agents (each linking to its versions) and an eval run opened by id.
import { useEffect, useState } from "preact/hooks";
import type { AgentConfig, RuntimeClient } from "../../../src/client/index";
import { describeError } from "./format";
import { agentPath, evalPath, followLink, navigate, sessionPath } from "./router";
import { SessionList } from "./session-list";
import { ErrorText, IdForm, Section, useAction } from "./ui";

export function Home({ client }: { client: RuntimeClient }) {
  const [agents, setAgents] = useState<AgentConfig[] | null>(null);
  const [agentsError, setAgentsError] = useState<string | null>(null);
  const [agent, setAgent] = useState("");
  const start = useAction();

  useEffect(() => {
    client.listAgents().then(
      (list) => {
        setAgents(list);
        setAgent((a) => a || list[0]?.name || "");
      },
      (err) => setAgentsError(describeError(err)),
    );
  }, [client]);

  const create = async (e: Event) => {
    e.preventDefault();
    if (!agent) return;
    await start.run(async () => navigate(sessionPath((await client.createSession({ agent })).session_id)));
  };

  return (
    <>
      <h1>Sessions</h1>
      <SessionList client={client} />
      <Section title="Open a session" id="open-title">
        <IdForm field="open-sid" label="Session id" button="Open" onGo={(sid) => navigate(sessionPath(sid))} />
      </Section>
      <Section title="Start a session" id="start-title">
        <ErrorText error={agentsError} />
        {agents && agents.length === 0 ? (
          <p>No agents are registered yet: register one with PUT /v1/agents/&lt;name&gt;.</p>
        ) : (
          <form class="inline" onSubmit={create}>
            <label for="start-agent">Agent</label>
            <select id="start-agent" value={agent} onChange={(e) => setAgent(e.currentTarget.value)} disabled={!agents}>
              {(agents ?? []).map((a) => (
                <option key={a.name} value={a.name}>
                  {a.name} ({a.model})
                </option>
              ))}
            </select>
            <button type="submit" disabled={!agent || start.busy}>
              Start session
            </button>
          </form>
        )}
        <ErrorText error={start.error} />
      </Section>
      {agents && agents.length > 0 && (
        <Section title="Agents" id="agents-title">
          <ul class="agent-links" aria-labelledby="agents-title">
            {agents.map((a) => (
              <li key={a.name}>
                <a href={agentPath(a.name)} onClick={followLink}>
                  {a.name}
                </a>{" "}
                <span class="meta">versions, labels and traffic</span>
              </li>
            ))}
          </ul>
        </Section>
      )}
      <Section title="Open an eval run" id="eval-title">
        <IdForm field="open-run" label="Eval run id" button="Show run" onGo={(id) => navigate(evalPath(id))} />
      </Section>
    </>
  );
}
