// What the session's read routes answer: the snapshot, the thread read model and pages of the log, all
// read from the folded read model or the stored event bodies.

import type { z } from "zod";
import { budgetMaxima, turnBudget } from "../../engine/budget-limits";
import { ApiError } from "../../protocol/errors";
import type { ExportHeader } from "../../protocol/operations/sessions";
import type { EventsPageBody } from "../../protocol/operations/streams";
import { redactAgentConfig } from "../../protocol/redact";
import { jsonText, type ResponseBody } from "../../protocol/session-operations";
import type { SnapshotSchema } from "../../protocol/views";
import { buildTree } from "../../views/execution-tree";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost, SocketsHost, TurnsHost } from "../hosts";
import { checkCursor, conversationJson } from "../store/log-reads";
import type { SessionStore } from "../store/session-store";
import { conversationPageJson } from "./chat-page";

export const MAX_EVENTS_PAGE = 1000;
export const MAX_PAGE_BYTES = 1_000_000;

export function snapshotView(s: LogHost & SettingsHost, channels: SnapshotChannel[]) {
  const row = s.row();
  const view = s.view();
  return {
    session_id: row.session_id,
    agent: redactAgentConfig(s.agent()),
    agent_version: view.agent_version ?? null,
    policy: s.policy(),
    status: view.status,
    created_at: row.created_at,
    metadata: view.metadata,
    orchestration_depth: row.orchestration_depth,
    owner: row.owner,
    resource_id: row.resource_id,
    threads: [{ thread_id: row.thread_id, status: view.status, active_turn_id: view.active_turn_id }],
    turns: view.turns,
    turn_count: view.turn_count,
    last_sequence: view.last_sequence,
    channels,
  };
}

export function threadView(s: LogHost & SettingsHost) {
  const config = s.agent();
  const view = s.view();
  return {
    session_id: view.session_id,
    thread_id: view.thread_id,
    status: view.status,
    active_turn_id: view.active_turn_id,
    pending_actions: view.pending_actions,
    queued_turns: view.queued_turns,
    last_outcome: view.last_outcome,
    budget: { used: view.usage, limits: { max_steps: config.max_steps, ...turnBudget(config.budget, budgetMaxima(s.bindings())) } },
    last_sequence: view.last_sequence,
  };
}

/** Events after `after` as one JSON document, built from the stored bodies without re-serializing them. */
export function eventsPage(store: Pick<SessionStore, "lastSequence" | "readEvents">, after: number, limit: number): string {
  checkCursor(store, after);
  const page = store.readEvents(after, Math.min(limit, MAX_EVENTS_PAGE));
  // A page also stops at about MAX_PAGE_BYTES (always at least one event), so one response stays small.
  let bytes = 0;
  let count = 0;
  while (count < page.length && (count === 0 || bytes + page[count]!.body.length <= MAX_PAGE_BYTES)) bytes += page[count++]!.body.length;
  const taken = page.slice(0, count);
  const next = taken.length > 0 ? taken[taken.length - 1]!.sequence : after;
  return `{"events":[${taken.map((e) => e.body).join(",")}],"next_after":${next},"has_more":${next < store.lastSequence}}`;
}

export function exportHeader(s: LogHost & SettingsHost): ExportHeader {
  const row = s.row();
  const metadata = JSON.parse(row.metadata) as Record<string, unknown>;
  return {
    session_id: row.session_id,
    thread_id: row.thread_id,
    agent: redactAgentConfig(s.agent()),
    policy: s.policy(),
    metadata,
    owner: row.owner,
    created_at: row.created_at,
    last_sequence: s.store.lastSequence,
  };
}

/** A remote channel as the snapshot lists it. */
type SnapshotChannel = z.input<typeof SnapshotSchema>["channels"][number];

/** The read operations: the snapshot, the thread, pages of the log and the export's header, turns' trees, the chat's messages. */
export function viewsCapability(s: LogHost & TurnsHost & SettingsHost & SocketsHost) {
  return {
    operations: {
      getSession: () => snapshotView(s, s.channels.list()),
      getThread: () => threadView(s),
      getEvents: ({ query }) => jsonText<EventsPageBody>(eventsPage(s.store, query?.after ?? 0, query?.limit ?? 100)),
      exportSession: () => exportHeader(s),
      getExecutionTree: ({ params }) => {
        const turnId = params.turn_id;
        if (!s.store.turn(turnId)) throw ApiError.notFound("Turn", turnId);
        return buildTree(s.store.eventsOfTurn(turnId));
      },
      getChatMessages: ({ query }) => {
        if (query?.limit !== undefined)
          return jsonText<ResponseBody<"getChatMessages">>(conversationPageJson(s.store, { limit: query.limit, before: query.before }));
        if (query?.before !== undefined) throw ApiError.validation([{ path: "before", reason: "goes with limit (the page's size)" }]);
        return jsonText<ResponseBody<"getChatMessages">>(conversationJson(s.store));
      },
    },
  } satisfies Capability;
}
