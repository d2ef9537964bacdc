// The read models a client reads (docs/architecture.md): the session snapshot, the thread, turn summaries and the
// execution tree, as zod schemas (for OpenAPI and the client's types); the folds that build them from the
// log are in src/views/.
import { z } from "zod";
import { SHARED_SHAPES } from "./event-shapes";
import { PolicySchema } from "./policy";

export const ThreadStatusSchema = z.enum(["idle", "running", "waiting_permission", "recovering"]);
export type ThreadStatus = z.infer<typeof ThreadStatusSchema>;
export type TurnStatus = "queued" | "accepted" | "running" | "completed" | "failed" | "cancelled";

export const TurnSummarySchema = z
  .object({
    turn_id: z.string(),
    status: z.enum(["queued", "accepted", "running", "completed", "failed", "cancelled"]),
    input_preview: z.string(),
    submitted_at: z.number(),
    started_at: z.number().nullable(),
    ended_at: z.number().nullable(),
    output_preview: z.string().nullable(),
    stop_reason: z.string().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
  })
  .meta({ id: "TurnSummary" });
export type TurnSummary = z.infer<typeof TurnSummarySchema>;

export const TurnUsageSchema = z
  .object({ llm_calls: z.number(), tool_calls: z.number(), subtasks: z.number(), input_tokens: z.number(), output_tokens: z.number() })
  .meta({ id: "TurnUsage" });
export type TurnUsage = z.infer<typeof TurnUsageSchema>;

const PendingAction = z.object({
  action_id: z.string(),
  kind: z.string(),
  tool_call_id: z.string().optional(),
  tool_name: z.string().optional(),
  args: z.unknown().optional(),
  expires_at: z.number().optional(),
  question: z.string().optional().describe("user_input: the question"),
  response_schema: z.record(z.string(), z.unknown()).optional().describe("user_input: the JSON Schema of the answer"),
  approvals_required: z.number().optional().describe("a tool that needs several approvals"),
  approved_by: z.array(z.string()).optional().describe("with approvals_required: who approved so far"),
});

const LastOutcome = z
  .object({ turn_id: z.string(), type: z.string(), stop_reason: z.string().optional(), error: z.unknown().optional(), reason: z.string().optional() })
  .nullable();

/** The folded read model of a session (kept in memory and persisted as the snapshot row). */
export interface SessionView {
  session_id: string;
  thread_id: string;
  agent: string;
  /** The version of the agent the session runs (null: an inline agent, or opened before versions; after a handoff, the version handed to; absent in snapshots stored before). */
  agent_version?: number | null;
  created_at: number;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  active_turn_id: string | null;
  queued_turns: string[];
  pending_actions: z.infer<typeof PendingAction>[];
  last_outcome: z.infer<typeof LastOutcome>;
  /** Usage of the active turn, or of the last one when idle. */
  usage: TurnUsage;
  /** The most recent turns (at most MAX_TURNS_IN_VIEW). */
  turns: TurnSummary[];
  turn_count: number;
  last_sequence: number;
}

export const ThreadSchema = z
  .object({
    session_id: z.string(),
    thread_id: z.string(),
    status: ThreadStatusSchema,
    active_turn_id: z.string().nullable(),
    pending_actions: z.array(PendingAction),
    queued_turns: z.array(z.string()),
    last_outcome: LastOutcome,
    budget: z.object({ used: TurnUsageSchema, limits: z.record(z.string(), z.number()) }),
    last_sequence: z.number(),
  })
  .meta({ id: "Thread" });
export type Thread = z.infer<typeof ThreadSchema>;

export const SnapshotSchema = z
  .object({
    session_id: z.string(),
    agent: z.record(z.string(), z.unknown()).describe("the AgentConfig the session runs"),
    agent_version: z
      .number()
      .nullable()
      .describe(
        "the version of the registered agent the session runs (null: an inline agent, or opened before versions; after a handoff, the version handed to)",
      ),
    policy: PolicySchema,
    status: ThreadStatusSchema,
    created_at: z.number(),
    metadata: z.record(z.string(), z.unknown()),
    orchestration_depth: z.number(),
    owner: z.string().nullable(),
    resource_id: z.string().nullable().describe("the resource whose memory the session uses (docs/guides/memory.md)"),
    threads: z.array(z.object({ thread_id: z.string(), status: ThreadStatusSchema, active_turn_id: z.string().nullable() })),
    turns: z.array(TurnSummarySchema),
    turn_count: z.number(),
    last_sequence: z.number(),
    channels: z.array(z.object({ channel_id: z.string(), acked_sequence: z.number(), updated_at: z.number() })),
  })
  .meta({ id: "SessionSnapshot" });

export interface TreeNode {
  id: string;
  parent_id: string | null;
  name: string;
  title?: string;
  args_preview: string | null;
  result_preview: string | null;
  is_error: boolean;
  /** Null while the call runs. */
  duration_ms: number | null;
  /** The time the call waited on a person (an approval, or an ask_user question), and who decided. */
  human_wait?: HumanWait;
  children: TreeNode[];
}

const HumanWaitSchema = z.object({
  kind: z.enum(["tool_approval", "user_input"]),
  action_id: z.string(),
  asked_at: z.number(),
  decided_at: z.number().nullable().describe("null while it waits"),
  duration_ms: z.number().nullable(),
  decision: z.enum(["approved", "rejected", "timed_out", "answered"]).nullable(),
  by: z.string().nullable().describe("who decided: a principal, or runtime (the deadline, the turn's end)"),
  approved_by: z.array(z.string()).optional().describe("a quorum's approvers so far"),
});
export type HumanWait = z.infer<typeof HumanWaitSchema>;

export const TreeNodeSchema: z.ZodType<TreeNode> = z
  .object({
    id: z.string(),
    parent_id: z.string().nullable(),
    name: z.string(),
    title: z.string().optional(),
    args_preview: z.string().nullable(),
    result_preview: z.string().nullable(),
    is_error: z.boolean(),
    duration_ms: z.number().nullable(),
    human_wait: HumanWaitSchema.optional(),
    get children() {
      return z.array(TreeNodeSchema);
    },
  })
  .meta({ id: "TreeNode" });

export const ToolInventorySchema = z
  .object({
    tools: z.array(SHARED_SHAPES.ToolDescription),
    policy: PolicySchema,
  })
  .meta({ id: "ToolInventory" });
