// What a fork of a session starts from (docs/guides/fork-and-replay.md): the conversation as of one sequence of the source's log,
// read in bulk from the stored history and a few indexed queries over the events, never event by event.
import type { ModelMessage } from "ai";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError } from "../protocol/errors";
import type { Policy } from "../protocol/policy";
import { type PausedCut, pausedCut, recordedResults } from "./fork-paused";
import type { Capability } from "./session-capability";
import type { SessionContext, SessionSlice } from "./session-context";
import type { SessionStore } from "./session-store";

/** What a fork is made from; the messages as JSON, as they are stored. */
export type ForkSource = {
  agent: AgentConfig;
  policy: Policy;
  metadata: string;
  owner: string | null;
  resource_id: string | null;
  messages_json: string;
  paused_json: string | null;
};

/** Rows of the messages table that belong to no turn: a fork's starting history and a compacted one. */
const SEEDS = ["fork", "compaction"];

/**
 * The conversation as of `at`: turns ended by then whole, and the completed steps of a turn cut there; or, when
 * that turn waited for approvals at `at`, the turn itself (it comes back waiting in the fork).
 */
/** The store reads that find the conversation at a point of the log. */
export type HistoryStore = Pick<SessionStore, "lastSequence" | "sql" | "turn" | "turnState">;

export function historyAt(store: HistoryStore, at: number): { messages: ModelMessage[]; paused: PausedCut | null } {
  if (!Number.isInteger(at) || at < 1 || at > store.lastSequence) {
    throw ApiError.validation([{ path: "at_sequence", reason: `must be a sequence of the log (1 to ${store.lastSequence})` }]);
  }
  const compactedAfter = store.sql
    .exec<{ n: number }>(
      "SELECT count(*) AS n FROM events WHERE type = 'context.compaction.completed' AND sequence > ? AND coalesce(json_extract(body, '$.depth'), 0) = 0",
      at,
    )
    .one().n;
  if (compactedAfter > 0) throw new ApiError("conflict", "The history was compacted after at_sequence; the messages before it are no longer stored");
  const ended = store.sql
    .exec<{ turn_id: string }>(
      "SELECT turn_id FROM events WHERE sequence <= ? AND type IN ('turn.completed', 'turn.failed', 'turn.cancelled') AND turn_id IS NOT NULL",
      at,
    )
    .toArray()
    .map((r) => r.turn_id);
  const keep = new Set([...SEEDS, ...ended]);
  const messages = store.sql
    .exec<{ turn_id: string; message: string }>("SELECT turn_id, message FROM messages ORDER BY id")
    .toArray()
    .filter((r) => keep.has(r.turn_id))
    .map((r) => JSON.parse(r.message) as ModelMessage);
  const cut = cutTurn(store, at, new Set(ended));
  return { messages: [...messages, ...cut.messages], paused: cut.paused };
}

/** The turn that was running at `at`: its completed steps, or the whole turn when it waited for approvals there. */
function cutTurn(store: HistoryStore, at: number, ended: Set<string>): { messages: ModelMessage[]; paused: PausedCut | null } {
  const started = store.sql
    .exec<{ turn_id: string }>("SELECT turn_id FROM events WHERE sequence <= ? AND type = 'turn.started' ORDER BY sequence DESC LIMIT 1", at)
    .toArray()[0]?.turn_id;
  if (!started || ended.has(started)) return { messages: [], paused: null };
  // Its messages: in the history once it ended, in its checkpoint while it still runs.
  const rows = store.sql.exec<{ message: string }>("SELECT message FROM messages WHERE turn_id = ? ORDER BY id", started).toArray();
  const all = rows.length > 0 ? rows.map((r) => JSON.parse(r.message) as ModelMessage) : (store.turnState(started)?.messages ?? []);
  const steps = store.sql
    .exec<{ n: number }>(
      `SELECT count(*) AS n FROM events WHERE turn_id = ? AND sequence <= ? AND type = 'model.completed'
       AND coalesce(json_extract(body, '$.depth'), 0) = 0 AND coalesce(json_extract(body, '$.payload.phase'), 'executor') = 'executor'
       AND json_extract(body, '$.payload.finish_reason') NOT IN ('error', 'interrupted', 'cancelled')`,
      started,
      at,
    )
    .one().n;
  const results = recordedResults(store, started, at);
  const prefix = completedPrefix(all, steps, new Set(results.keys()));
  const paused = pausedCut(store, started, at, prefix, steps, results);
  if (paused) return { messages: [], paused };
  const last = prefix[prefix.length - 1];
  // An assistant message whose tool calls have no results yet would leave the conversation invalid.
  if (last?.role === "assistant" && Array.isArray(last.content) && last.content.some((p) => p.type === "tool-call")) prefix.pop();
  return { messages: prefix, paused: null };
}

/** The messages up to the first one not complete at the cut (the last may be an assistant message with calls still open). */
export function completedPrefix(messages: ModelMessage[], steps: number, results: Set<string>): ModelMessage[] {
  const out: ModelMessage[] = [];
  let assistants = 0;
  for (const m of messages) {
    if (m.role === "assistant" && ++assistants > steps) break;
    if (m.role === "tool" && !m.content.every((p) => p.type !== "tool-result" || results.has(p.toolCallId))) break;
    out.push(m);
  }
  return out;
}

/** The slice of the session a fork reads. */
export type SourceSession = SessionSlice<"agent" | "policy" | "row", keyof HistoryStore>;

/** What a fork or a replay of this session takes from it besides the conversation: its config, metadata and owner. */
export function sourceConfig(s: Pick<SessionContext, "agent" | "policy" | "row">): Omit<ForkSource, "messages_json" | "paused_json"> {
  return { agent: s.agent(), policy: s.policy(), metadata: s.row().metadata, owner: s.row().owner, resource_id: s.row().resource_id };
}

/** Its session operation: what a fork at `at_sequence` starts from. */
export function forkCapability(s: SourceSession): Capability {
  return {
    operations: {
      forkSource: ({ body }) => {
        const cut = historyAt(s.store, (body as { at_sequence: number }).at_sequence);
        // As JSON: model messages are too rich a type for the RPC's typing, and are stored as JSON anyway.
        return { ...sourceConfig(s), messages_json: JSON.stringify(cut.messages), paused_json: cut.paused && JSON.stringify(cut.paused) };
      },
    },
  };
}
