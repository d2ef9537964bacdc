// Sessions (docs/reference/api.md): open, list, read, fork, export and erase.
import { z } from "zod";
import type { AgentConfig } from "../agent-config";
import { ResourceId } from "../memory";
import { Metadata } from "../metadata";
import { type Policy, PolicySchema } from "../policy";
import { CanonicalId } from "../principal-id";
import { IndexFilterText, SessionSummarySchema } from "../session-list";
import { SnapshotSchema, ThreadSchema, ThreadStatusSchema, ToolInventorySchema } from "../views";
import { answers, json, jsonBody, operation, Sid } from "./operation";

/** A registered agent's name, or an inline config (validated on its own, each failing field named under "agent."). */
const AgentRef = z.union([z.string().min(1), z.record(z.string(), z.unknown())]);

export const CreateSessionBody = z
  .strictObject({
    agent: AgentRef.meta({
      description:
        "A registered agent's name (its traffic split's version, else its newest), `name@<version>`, `name@<label>`, or an inline AgentConfig (see the AgentConfig schema)",
    }),
    policy: PolicySchema.optional().meta({
      description: "Enabled permission classes (default: all but external_mutate and secrets) and the workspace root",
    }),
    metadata: Metadata.optional(),
    owner: CanonicalId.optional().meta({
      description:
        "Who the session is for (an end user's id, canonical like a token's subject and compared exactly); a browser token's subject is used instead",
    }),
    resource_id: ResourceId.optional().meta({
      description: "The resource (end user or account) whose memory the session uses (default: the token's subject, else `owner`; none: no memory)",
    }),
  })
  .meta({ id: "CreateSession" });

export const SessionCreated = z.object({
  session_id: z.string(),
  thread_id: z.string(),
  agent_version: z.number().nullable().optional().describe("the version of the registered agent the session runs (null: an inline agent)"),
  label: z.string().optional().describe("the label whose version the session runs (`name@label`, or the agent's traffic split)"),
});

export const createSession = operation({
  method: "post",
  path: "/v1/sessions",
  operationId: "createSession",
  summary: "Open a session with a registered or inline agent",
  permission: "sessions.create",
  rateLimit: "request",
  body: jsonBody(CreateSessionBody),
  responses: { 201: json(SessionCreated, "Created") },
  errors: [404, 422],
});

export const SessionPage = z.object({
  sessions: z.array(SessionSummarySchema),
  next_cursor: z.string().nullable().describe("pass as `cursor` for the next page; null on the last page"),
});

export const listSessions = operation({
  method: "get",
  path: "/v1/sessions",
  operationId: "listSessions",
  summary:
    "The deployment's sessions, newest first, from the session index: filters agent, agent_version, status, owner, metadata.<key>=<value> (text match), created_after, active_after (ISO 8601 or ms); limit 1-100 (default 20); cursor from next_cursor. A token bound to an agent lists its subject's sessions of that agent only.",
  permission: "sessions.list",
  rateLimit: "request",
  query: z.object({
    agent: IndexFilterText.optional(),
    agent_version: z.string().optional().describe("the version of the agent the sessions run now (with agent)"),
    status: ThreadStatusSchema.optional(),
    owner: IndexFilterText.optional(),
    created_after: z.string().optional(),
    active_after: z.string().optional(),
    limit: z.string().optional(),
    cursor: z.string().optional(),
  }),
  responses: { 200: json(SessionPage, "A page of sessions") },
  errors: [422],
});

export const getSession = operation({
  method: "get",
  path: "/v1/sessions/{sid}",
  operationId: "getSession",
  summary: "Session snapshot: agent, status, threads, turns, last sequence, channels",
  permission: "session.read",
  rateLimit: "request",
  params: Sid,
  responses: { 200: json(SnapshotSchema, "Snapshot") },
  errors: [404],
  session: true,
});

export const getThread = operation({
  method: "get",
  path: "/v1/sessions/{sid}/thread",
  operationId: "getThread",
  summary: "Thread read model: status, active turn, pending actions, queue, last outcome, budget",
  permission: "session.read",
  rateLimit: "request",
  params: Sid,
  responses: { 200: json(ThreadSchema, "Thread read model") },
  errors: [404],
  session: true,
});

export const getTools = operation({
  method: "get",
  path: "/v1/sessions/{sid}/tools",
  operationId: "getTools",
  summary: "Tool inventory of the session's agent",
  permission: "session.read",
  rateLimit: "request",
  params: Sid,
  responses: { 200: json(ToolInventorySchema, "Tools") },
  errors: [404],
  session: true,
});

/** What an erasure could not erase: each session with why (erase it again with DELETE /v1/sessions/:sid). */
export const ErasureLeft = z
  .object({
    left: z.array(z.object({ session_id: z.string(), reason: z.string() })).meta({ description: "The sessions that are not erased, each with why" }),
  })
  .meta({ id: "ErasureLeft" });

export const eraseSession = operation({
  method: "delete",
  path: "/v1/sessions/{sid}",
  operationId: "eraseSession",
  summary:
    "Erases the session and the sessions made from it (its forks and replays, and theirs): their running and queued turns end, their sockets close (code 4010), their R2 objects, index rows and storage go, and every route of them answers 404 afterwards. Idempotent (204 again for an erased session).",
  permission: "session.delete",
  rateLimit: "request",
  params: Sid,
  responses: {
    204: { description: "Erased, with every session made from it" },
    200: json(ErasureLeft, "The session is erased, but some sessions made from it could not be: `left` names them"),
  },
  errors: [404],
});

export const exportSession = operation({
  method: "get",
  path: "/v1/sessions/{sid}/export",
  operationId: "exportSession",
  summary:
    'The session as JSON lines (application/x-ndjson): a header line `{"type":"session.export", ...}` with its config, policy, metadata and owner, then every event after `after` (default 0) in order, streamed a page at a time. Spilled payloads are referenced by their artifact route, not inlined; the header lists the session\'s files (`files`, with `file_route`).',
  permission: "session.read",
  rateLimit: "request",
  params: Sid,
  query: z.object({ after: z.string().optional() }),
  responses: { 200: { description: "The header line, then one event per line", content: { "application/x-ndjson": z.string() } } },
  errors: [404, 422],
  session: true,
  custom: true,
  answers: answers<ExportHeader>(),
});

export const ForkBody = z
  .strictObject({
    at_sequence: z.int().meta({ description: "The fork holds the conversation as of this event of the source's log" }),
    agent: AgentRef.optional().meta({ description: "Another agent for the fork: a registered name or an inline AgentConfig (default: the source's)" }),
    metadata: Metadata.optional().meta({ description: `${Metadata.description}; default: the source's` }),
  })
  .meta({ id: "ForkSession" });

export const SessionForked = SessionCreated.extend({ from_session: z.string(), at_sequence: z.int() });

export const forkSession = operation({
  method: "post",
  path: "/v1/sessions/{sid}/fork",
  operationId: "forkSession",
  summary: "Open a new session with this session's conversation as of one event",
  permission: "sessions.create",
  rateLimit: "request",
  params: Sid,
  body: jsonBody(ForkBody),
  responses: { 201: json(SessionForked, "Forked") },
  errors: [404, 409, 422],
  session: true,
  custom: true,
  answers: answers<ForkSource>(),
});

/** What a fork or a replay takes from its source session besides the conversation: its config, metadata and owner. */
export type SourceConfig = {
  agent: AgentConfig;
  policy: Policy;
  metadata: string;
  owner: string | null;
  resource_id: string | null;
  /** The version of the registered agent the source runs (null: an inline agent, or a handoff's before versions). */
  agent_version: number | null;
};

/** What the source session's forkSession answers its route: the conversation as of `at_sequence`, as JSON, as it is stored. */
export type ForkSource = SourceConfig & { messages_json: string; paused_json: string | null };

/** What the session answers the export route: the header line's fields (the route adds the cursor, routes and files). */
export interface ExportHeader {
  session_id: string;
  thread_id: string;
  agent: AgentConfig;
  policy: Policy;
  metadata: Record<string, unknown>;
  owner: string | null;
  created_at: number;
  last_sequence: number;
}
