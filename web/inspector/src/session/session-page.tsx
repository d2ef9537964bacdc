// One session: its conversation, live, with what a person can do about it (approvals, interrupt, a new
// turn or a message to the running one, the queue), its budget, and the raw event timeline.
import { useMemo } from "preact/hooks";
import type { RuntimeClient } from "../../../../src/client/index";
import { RuntimeError } from "../../../../src/client/index";
import { describeError } from "../format";
import { agentPath, BASE, evalPath, followLink, resourcePath } from "../router";
import { Approvals } from "./approvals";
import { Budget } from "./budget";
import { Composer } from "./composer";
import { Conversation } from "./conversation";
import { FileSource } from "./files";
import { type Connection, useSessionStream } from "./live";
import type { SessionModel } from "./model";
import { Questions } from "./questions";
import { Queue } from "./queue";
import { Timeline } from "./timeline";
import { UsageChart } from "./usage-chart";

const CONNECTION_LABEL: Record<Connection["state"], string> = {
  connecting: "Connecting…",
  "catching-up": "Catching up…",
  live: "Live",
  reconnecting: "Reconnecting…",
  failed: "Disconnected",
};

function threadStatus(model: SessionModel): string {
  if (model.pendingApprovals.length > 0) return "waiting for approval";
  if (model.pendingQuestions.length > 0) return "waiting for an answer";
  if (model.recovering) return "recovering";
  return model.activeTurnId ? "running" : "idle";
}

export function SessionPage({ client, sid, onUnauthorized }: { client: RuntimeClient; sid: string; onUnauthorized(): void }) {
  const { model, connection, thread, refreshThread } = useSessionStream(client, sid);
  const files = useMemo(() => ({ client, sid }), [client, sid]);

  if (connection.state === "failed") return <Failed error={connection.error} sid={sid} onUnauthorized={onUnauthorized} />;

  const status = threadStatus(model);
  return (
    <FileSource.Provider value={files}>
      <div class="session">
        <header class="session-head">
          <h1>
            Session <code class="id">{sid}</code>
          </h1>
          <p class="meta">
            {model.agent && (
              <>
                agent{" "}
                <a href={agentPath(model.agent, model.agentVersion)} onClick={followLink} data-testid="session-agent">
                  <strong>{model.agent}</strong>
                  {model.agentVersion !== null && ` v${model.agentVersion}`}
                </a>{" "}
                ·{" "}
              </>
            )}
            {model.evalRun && (
              <>
                case of eval run{" "}
                <a href={evalPath(model.evalRun)} onClick={followLink}>
                  <code>{model.evalRun}</code>
                </a>{" "}
                ·{" "}
              </>
            )}
            {model.resource && (
              <>
                resource{" "}
                <a href={resourcePath(model.resource, model.agent || null)} onClick={followLink}>
                  {model.resource}
                </a>{" "}
                ·{" "}
              </>
            )}
            <span class={`badge thread-${status.replace(/ /g, "-")}`}>{status}</span>
          </p>
          <p class={`connection connection-${connection.state}`} role="status" data-state={connection.state}>
            {CONNECTION_LABEL[connection.state]}
          </p>
        </header>
        <div class="session-grid">
          <div class="session-main">
            <Approvals client={client} sid={sid} approvals={model.pendingApprovals} />
            <Questions client={client} sid={sid} questions={model.pendingQuestions} />
            <Conversation model={model} />
            <Composer client={client} sid={sid} running={model.activeTurnId !== null} onDone={refreshThread} />
          </div>
          <aside class="session-side" aria-label="Queue and budget">
            <Queue client={client} sid={sid} model={model} />
            <Budget thread={thread} />
            <UsageChart turns={model.turns} />
          </aside>
        </div>
        <Timeline events={model.events} />
      </div>
    </FileSource.Provider>
  );
}

function Failed({ error, sid, onUnauthorized }: { error: Error; sid: string; onUnauthorized(): void }) {
  const status = error instanceof RuntimeError ? error.status : 0;
  return (
    <section class="panel" aria-labelledby="failed-title">
      <h1 id="failed-title">{status === 404 ? "No such session" : status === 401 ? "Your key was refused" : "Cannot follow this session"}</h1>
      <p>{status === 404 ? `This runtime has no session ${sid}.` : describeError(error)}</p>
      {status === 401 || status === 403 ? (
        <button type="button" onClick={onUnauthorized}>
          Sign in again
        </button>
      ) : (
        <a href={BASE} onClick={followLink}>
          Back to the sessions
        </a>
      )}
    </section>
  );
}
