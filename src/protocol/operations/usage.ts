// Usage totals from the session index.
import { z } from "zod";
import { IndexFilterText, UsageRowSchema } from "../session-list";
import { json, operation } from "./operation";

const GroupBy = z.enum(["agent", "owner", "day", "version"]);

export const UsageReport = z.object({
  from: z.string(),
  to: z.string(),
  group_by: GroupBy,
  rows: z.array(UsageRowSchema),
  stored_bytes: z.number().describe("bytes the files of the sessions (of the agent or owner asked for) take in R2 now, whatever the time range"),
});

export const getUsage = operation({
  method: "get",
  path: "/v1/usage",
  operationId: "getUsage",
  summary:
    "Usage totals from the session index: turns, failures, model and tool calls, tokens and cost in USD (unpriced model calls counted apart), per UTC day, between from and to (inclusive, YYYY-MM-DD or ISO 8601; default the last 7 days), grouped by agent (default), owner, day or version (`agent@version`), optionally for one agent or owner; and the bytes those sessions' files store now",
  permission: "usage.read",
  rateLimit: "request",
  query: z.object({
    from: z.string().optional(),
    to: z.string().optional(),
    group_by: GroupBy.optional(),
    agent: IndexFilterText.optional(),
    owner: IndexFilterText.optional(),
  }),
  responses: { 200: json(UsageReport, "Totals") },
  errors: [422],
});
