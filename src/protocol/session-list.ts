// The deployment's session index and usage totals, as the API serves them (GET /v1/sessions, GET /v1/usage).
import { z } from "zod";
import { ThreadStatusSchema } from "./views";

/** An agent or owner a list route filters by: as an agent's name or a session's owner may be. */
export const IndexFilterText = z.string().min(1).max(200);

export const SessionSummarySchema = z.object({
  session_id: z.string(),
  agent: z.string(),
  agent_version: z
    .number()
    .nullable()
    .describe("the version of the agent the session runs (null: an inline agent, or opened before versions; after a handoff, the version handed to)"),
  owner: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.number().describe("ms since the epoch"),
  last_activity: z.number().describe("the time of the session's last event"),
  status: ThreadStatusSchema.describe("the session's status now (written to the index within a second of a change)"),
  turns: z.number().describe("turns that ended"),
  input_tokens: z.number(),
  output_tokens: z.number(),
  cost_usd: z.number().describe("the cost of the calls whose model has a known price"),
  unpriced_model_calls: z.number().describe("model calls whose model has no known price (not counted in cost_usd)"),
  log_events: z.number().describe("the size of the session's log (its last sequence)"),
  stored_bytes: z.number().describe("bytes of the session's files in R2 now (uploads, attachments, files tools returned)"),
});
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** What a session adds to the usage totals on one UTC day. */
export interface UsageDay {
  day: string;
  turns: number;
  failures: number;
  model_calls: number;
  tool_calls: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  unpriced_model_calls: number;
}

export const UsageRowSchema = z.object({
  key: z.string().nullable().describe("the agent, owner or day of the group (null: sessions without an owner, or erased)"),
  turns: z.number(),
  failures: z.number(),
  model_calls: z.number(),
  tool_calls: z.number(),
  input_tokens: z.number(),
  cached_input_tokens: z.number().describe("input tokens read from the providers' prompt caches (part of input_tokens, priced as cached input)"),
  output_tokens: z.number(),
  cost_usd: z.number().describe("the cost of the calls whose model has a known price"),
  unpriced_model_calls: z.number().describe("calls of models with no known price: their cost is unknown, not zero"),
});
export type UsageRow = z.infer<typeof UsageRowSchema>;

export interface SessionListQuery {
  /** The agent running the session now (a handoff changes it). */
  agent?: string;
  /** The agent the session was opened with: an agent-bound token lists by it. */
  opened_agent?: string;
  /** The version of the agent the session runs now. */
  agent_version?: number;
  status?: SessionSummary["status"];
  owner?: string;
  metadata: [key: string, value: string][];
  created_after?: number;
  active_after?: number;
  limit: number;
  /** Keyset position: the (created_at, session_id) of the last row of the previous page. */
  before?: [number, string];
}

export interface UsageQuery {
  from: string;
  to: string;
  group_by: "agent" | "owner" | "day" | "version";
  agent?: string;
  owner?: string;
}

/** The summed columns of a usage day (a session's usage_days rows, the index's, and /v1/usage rows). */
export const USAGE_COLUMNS = [
  "turns",
  "failures",
  "model_calls",
  "tool_calls",
  "input_tokens",
  "cached_input_tokens",
  "output_tokens",
  "cost_usd",
  "unpriced_model_calls",
] as const;
