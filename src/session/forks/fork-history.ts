// What a fork of a session starts from (docs/guides/fork-and-replay.md): the conversation as of one sequence of the source's log,
// read in bulk from the stored history and a few indexed queries over the events, never event by event.
import type { ModelMessage } from "ai";
import { ApiError } from "../../protocol/errors";
import type { ForkSource, SourceConfig } from "../../protocol/operations/sessions";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost, TurnsHost } from "../hosts";
import { type PausedCut, pausedCut, recordedResults } from "./fork-paused";

/** Rows of the messages table that belong to no turn: a fork's starting history and a compacted one. */
const SEEDS = ["fork", "compaction"];

/** The store reads that find the conversation at a point of the log. */
export type HistoryStore = (LogHost & TurnsHost)["store"];

/**
 * The conversation as of `at`: turns ended by then whole, and the completed steps of a turn cut there; or, when
 * that turn waited for approvals at `at`, the turn itself (it comes back waiting in the fork).
 */
export function historyAt(store: HistoryStore, at: number): { messages: ModelMessage[]; paused: PausedCut | null } {
  if (!Number.isInteger(at) || at < 1 || at > store.lastSequence) {
    throw ApiError.validation([{ path: "at_sequence", reason: `must be a sequence of the log (1 to ${store.lastSequence})` }]);
  }
  if (store.forkReads.compactionsAfter(at) > 0)
    throw new ApiError("conflict", "The history was compacted after at_sequence; the messages before it are no longer stored");
  const ended = store.forkReads.turnsEndedBy(at);
  const messages = store.forkReads.historyOf(new Set([...SEEDS, ...ended]));
  const cut = cutTurn(store, at, new Set(ended));
  return { messages: [...messages, ...cut.messages], paused: cut.paused };
}

/** The turn that was running at `at`: its completed steps, or the whole turn when it waited for approvals there. */
function cutTurn(store: HistoryStore, at: number, ended: Set<string>): { messages: ModelMessage[]; paused: PausedCut | null } {
  const started = store.forkReads.lastStartedBy(at);
  if (!started || ended.has(started)) return { messages: [], paused: null };
  // Its messages: in the history once it ended, in its checkpoint while it still runs.
  const stored = store.forkReads.turnHistory(started);
  const all = stored.length > 0 ? stored : (store.turnState(started)?.messages ?? []);
  const steps = store.forkReads.completedSteps(started, at);
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
export type SourceSession = LogHost & TurnsHost & SettingsHost;

/** What a fork or a replay of this session takes from it besides the conversation: its config, metadata and owner. */
export function sourceConfig(s: LogHost & SettingsHost): SourceConfig {
  const row = s.row();
  return {
    agent: s.agent(),
    policy: s.policy(),
    metadata: row.metadata,
    owner: row.owner,
    resource_id: row.resource_id,
    agent_version: s.view().agent_version ?? null,
  };
}

/** Its session operation: what a fork at `at_sequence` starts from. */
export function forkCapability(s: SourceSession) {
  return {
    operations: {
      forkSession: ({ body }): ForkSource => {
        const cut = historyAt(s.store, body.at_sequence);
        // As JSON: model messages are too rich a type for the RPC's typing, and are stored as JSON anyway.
        return { ...sourceConfig(s), messages_json: JSON.stringify(cut.messages), paused_json: cut.paused && JSON.stringify(cut.paused) };
      },
    },
  } satisfies Capability;
}
