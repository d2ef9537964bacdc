// Tool calls waiting for a person: what would run, the deadline, and Approve / Reject with an optional reason.
import { useEffect, useState } from "preact/hooks";
import type { RuntimeClient } from "../../../../src/client/index";
import { clock, preview, until } from "../format";
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
  const action = useAction();
  const id = `approval-${approval.action_id}`;
  const decide = (decision: "approve" | "reject") => action.run(() => client.respondAction(sid, approval.action_id, decision, reason.trim() || undefined));
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
      <label for={`${id}-reason`}>Reason (optional)</label>
      <input id={`${id}-reason`} value={reason} maxLength={1000} onInput={(e) => setReason(e.currentTarget.value)} />
      <div class="buttons">
        <button type="button" aria-describedby={`${id}-what`} disabled={action.busy} onClick={() => decide("approve")}>
          Approve
        </button>
        <button type="button" class="danger" aria-describedby={`${id}-what`} disabled={action.busy} onClick={() => decide("reject")}>
          Reject
        </button>
      </div>
      <ErrorText error={action.error} />
    </li>
  );
}

/** The current time, ticking every second while `active`. */
function useNow(active: boolean): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}
