// What a turn or a sub-agent says and does, in order: streamed text, notes, injected messages and tool
// calls as cards. A card is a disclosure widget; sub-agent and orchestration calls hold their children's
// cards (by parent_id), and everything below depth 0 starts collapsed.
import { useState } from "preact/hooks";
import { duration, pretty, preview } from "../format";
import { codeToolPath, followLink, sessionPath } from "../router";
import { Files } from "./files";
import type { Approval, Item, SubAgent, ToolCall } from "./items";
import { ScriptDetails } from "./script";

/** Tools whose calls hold other agents' work. */
const PARENT_TOOLS = new Set(["run_subtask", "spawn_subagents", "agent_orchestrate"]);

const APPROVAL_LABEL: Record<Approval["status"], string> = {
  pending: "awaiting approval",
  approved: "approved",
  rejected: "rejected",
  timed_out: "approval timed out",
  answered: "answered",
};

export function Items({ items }: { items: Item[] }) {
  return (
    <>
      {items.map((item) => {
        switch (item.kind) {
          case "text":
            return (
              <div key={item.key} class={`msg assistant ${item.state}`}>
                <p>{item.text}</p>
                {item.state === "interrupted" && <p class="hint">(cut short)</p>}
              </div>
            );
          case "injected":
            return (
              <div key={item.key} class="msg user injected">
                <span class="who">You, during the turn</span>
                <p>{item.content}</p>
              </div>
            );
          case "note":
            return (
              <p key={item.key} class={`note note-${item.tone}`}>
                {item.tone === "plan" && <strong>Plan: </strong>}
                {item.text}
              </p>
            );
          default:
            return <ToolCard key={item.key} call={item} />;
        }
      })}
    </>
  );
}

export function ToolCard({ call }: { call: ToolCall }) {
  const holdsChildren = PARENT_TOOLS.has(call.name) || call.agents.length > 0 || call.steps.length > 0;
  const script = call.name === "run_code";
  // A script is read where it stands: its source and its calls show without a click.
  const [open, setOpen] = useState(call.depth === 0 && (script || !holdsChildren));
  const titleId = `call-${call.key}-title`;
  const bodyId = `call-${call.key}-body`;
  return (
    <article class={`card depth-${Math.min(call.depth, 3)}`} aria-labelledby={titleId} data-call-id={call.key} data-tool={call.name} data-status={call.status}>
      <div class="card-head">
        <h3 id={titleId} class="card-title">
          <code>{call.name}</code>
        </h3>
        {call.code_version !== null && (
          <a class="badge code-tool" href={codeToolPath(call.name, call.code_version)} onClick={followLink} title="A registered code tool: its source">
            code tool v{call.code_version}
          </a>
        )}
        <span class={`badge status-${call.status.replace(/ /g, "-")}`}>{call.status}</span>
        {call.approval && (
          <span class={`badge approval-${call.approval.status}`} data-approval={call.approval.status}>
            {call.approval.kind === "user_input" && call.approval.status === "pending" ? "awaiting an answer" : APPROVAL_LABEL[call.approval.status]}
          </span>
        )}
        {call.duration_ms !== null && <span class="meta">{duration(call.duration_ms)}</span>}
        <button type="button" class="disclose" aria-expanded={open} aria-controls={bodyId} aria-describedby={titleId} onClick={() => setOpen(!open)}>
          {open ? "Collapse" : "Expand"}
        </button>
      </div>
      {!(script && open) && (
        <p class="preview">
          <span class="label">args</span> {preview(call.args) || "—"}
        </p>
      )}
      {call.has_result && !(script && open) && (
        <p class="preview">
          <span class="label">result</span> {preview(call.result) || "—"}
        </p>
      )}
      {call.progress && <p class="preview progress">{call.progress}</p>}
      <Files files={call.files} label={`Files from ${call.name}`} />
      <div id={bodyId} class="card-body" hidden={!open}>
        {open && (script ? <ScriptDetails call={call} /> : <Details call={call} />)}
        {call.agents.map((agent) => (
          <SubAgentView key={agent.id} agent={agent} />
        ))}
        {call.steps.length > 0 && (
          <ol class="steps" aria-label="Orchestration steps">
            {call.steps.map((s) => (
              <li key={s.key}>
                {s.phase}
                {s.exec_id && (
                  <>
                    {" "}
                    <a href={sessionPath(s.exec_id)} onClick={followLink}>
                      child session <code>{s.exec_id}</code>
                    </a>
                  </>
                )}
              </li>
            ))}
          </ol>
        )}
      </div>
    </article>
  );
}

function Details({ call }: { call: ToolCall }) {
  return (
    <dl class="details">
      <dt>Arguments</dt>
      <dd>
        <pre>{pretty(call.args ?? null)}</pre>
      </dd>
      {call.has_result && (
        <>
          <dt>Result</dt>
          <dd>
            <pre>{pretty(call.result)}</pre>
          </dd>
        </>
      )}
      {call.approval?.reason && (
        <>
          <dt>Decision reason</dt>
          <dd>{call.approval.reason}</dd>
        </>
      )}
    </dl>
  );
}

function SubAgentView({ agent }: { agent: SubAgent }) {
  return (
    <section class="subagent" aria-label={`Sub-agent ${agent.title}`} data-subagent-id={agent.id}>
      <h4>
        {agent.title} <span class={`badge status-${agent.status}`}>{agent.status}</span>
      </h4>
      <Items items={agent.items} />
    </section>
  );
}
