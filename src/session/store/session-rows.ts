// The rows of a session object's tables as SessionStore reads and writes them.
import type { OnBusy } from "../../protocol/busy";
import type { ApprovalDecision } from "../../protocol/wire";
export type StoredEvent = {
  sequence: number;
  type: string;
  body: string;
};

export type SessionRow = {
  session_id: string;
  thread_id: string;
  agent: string;
  metadata: string;
  policy: string;
  created_at: number;
  /** How deep in agent_orchestrate child sessions this session runs (0: opened by a client). */
  orchestration_depth: number;
  owner: string | null;
  /** The resource (end user or account) whose memory the session reads and writes; null: none. */
  resource_id: string | null;
};

export type ActionRow = {
  action_id: string;
  turn_id: string;
  tool_call_id: string;
  tool_name: string;
  status: "pending" | ApprovalDecision;
  expires_at: number;
  kind: "tool_approval" | "user_input";
  /** user_input: the JSON Schema (JSON) the answer must match. */
  response_schema: string | null;
  /** An answered question's answer (JSON). */
  response: string | null;
  /** The tool's parameters (JSON) when an approver may edit the arguments. */
  args_schema: string | null;
  /** The arguments as an approver edited them (JSON). */
  args: string | null;
  /** How often an action.reminder is emitted while it waits (null: never). */
  remind_after_ms: number | null;
  /** Distinct principals who must approve (1 for most). */
  approvals_required: number;
  /** The principals who approved so far, toward approvals_required (JSON array; null: none). */
  approved_by: string | null;
  /** What the deadline does: reject (timed_out) or approve. */
  on_timeout: "reject" | "approve";
  decided_by: string | null;
  decided_at: number | null;
  reason: string | null;
  /** The envelope of the call's level, repeated on its action.resolved. */
  parent_id: string | null;
  depth: number;
  subagent_id: string | null;
};

export type TurnRow = {
  turn_id: string;
  position: number;
  status: "queued" | "running" | "completed" | "failed" | "cancelled";
  input: string;
  idempotency_key: string | null;
  created_at: number;
  /** The references of the files it was submitted with (JSON), or null. */
  files: string | null;
  /** With debounce_ms only: the on_busy its window was opened with, which later messages must match to join it. */
  on_busy: OnBusy | null;
  debounce_ms: number | null;
};
