// Tool calls waiting for a person: what would run, the deadline, and Approve / Reject with an optional reason.
// When the tool allows edits (the action carries its args_schema), "Edit arguments" opens the arguments as
// JSON: Approve then runs the call with the edited ones, checked here as a JSON object and by the server
// against the tool's schema (its 422 shows under the row).
import { useEffect, useState } from "preact/hooks";
import type { RuntimeClient } from "../../../../src/client/index";
import { clock, pretty, preview, until } from "../format";
import { ErrorText, Section, useAction } from "../ui";
import type { Approval } from "./items";

export function Approvals({ client, sid, approvals }: { client: RuntimeClient; sid: string; approvals: Approval[] }) {
  const now = useNow(approvals.length > 0);
  if (approvals.length === 0) return null;
  return (
    <Section title="Waiting for approval" id="approvals-title" class="approvals">
      <ul>
        {approvals.map((a) => (
          <ApprovalRow key={a.action_id} client={client} sid={sid} approval={a} now={now} />
        ))}
      </ul>
    </Section>
  );
}

function ApprovalRow({ client, sid, approval, now }: { client: RuntimeClient; sid: string; approval: Approval; now: number }) {
  const [reason, setReason] = useState("");
  const [edited, setEdited] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const action = useAction();
  const id = `approval-${approval.action_id}`;
  const decide = (decision: "approve" | "reject") => {
    const why = reason.trim() || undefined;
    let args: Record<string, unknown> | undefined;
    if (decision === "approve" && edited !== null) {
      const parsed = parseArgs(edited);
      setProblem(typeof parsed === "string" ? parsed : null);
      if (typeof parsed === "string") return;
      args = parsed;
    }
    return action.run(() => client.respondAction(sid, approval.action_id, { decision, ...(why ? { reason: why } : {}), ...(args ? { args } : {}) }));
  };
  return (
    <li class="approval" data-action-id={approval.action_id}>
      <p id={`${id}-what`}>
        <code>{approval.tool_name}</code> wants to run with <code class="args">{preview(approval.args, 240) || "no arguments"}</code>
      </p>
      {approval.expires_at !== null && (
        <p class="meta">
          Deadline <time dateTime={new Date(approval.expires_at).toISOString()}>{clock(approval.expires_at)}</time> ({until(approval.expires_at, now)})
        </p>
      )}
      {approval.args_schema !== null && (
        <button
          type="button"
          class="quiet"
          aria-expanded={edited !== null}
          aria-controls={`${id}-args`}
          onClick={() => {
            setEdited(edited === null ? pretty(approval.args ?? {}) : null);
            setProblem(null);
          }}
        >
          {edited === null ? "Edit arguments" : "Keep the original arguments"}
        </button>
      )}
      {edited !== null && (
        <>
          <label for={`${id}-args`}>Arguments (JSON)</label>
          <textarea id={`${id}-args`} class="args-editor" rows={5} spellcheck={false} value={edited} onInput={(e) => setEdited(e.currentTarget.value)} />
        </>
      )}
      <label for={`${id}-reason`}>Reason (optional)</label>
      <input id={`${id}-reason`} value={reason} maxLength={1000} onInput={(e) => setReason(e.currentTarget.value)} />
      <div class="buttons">
        <button type="button" aria-describedby={`${id}-what`} disabled={action.busy} onClick={() => decide("approve")}>
          {edited === null ? "Approve" : "Approve with these arguments"}
        </button>
        <button type="button" class="danger" aria-describedby={`${id}-what`} disabled={action.busy} onClick={() => decide("reject")}>
          Reject
        </button>
      </div>
      <ErrorText error={problem ?? action.error} />
    </li>
  );
}

/** Edited arguments: a JSON object, or the sentence saying why not. */
function parseArgs(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : "Arguments: must be a JSON object";
  } catch (err) {
    return `Arguments: not valid JSON (${err instanceof Error ? err.message : String(err)})`;
  }
}

/** The current time, drawn again every second while `active` (and read afresh on any other draw). */
export function useNow(active: boolean): number {
  const [, setNow] = useState(Date.now);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return Date.now();
}
