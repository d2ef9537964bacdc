// A replay session opened through the session objects' RPCs (docs/guides/fork-and-replay.md): a fork of the source
// just before the recorded turn, with that turn's recording, and the turn submitted again under the replay's key.
// The replay route opens one per request; an eval run of recorded turns one per case, again after a restart
// (the session then exists, and the same key finds the same turn).
import type { Env } from "../../env";
import type { AgentConfig } from "../../protocol/agent-config";
import { type Result, unwrap } from "../../protocol/errors";
import { REPLAY_TURN_KEY } from "../../protocol/event-shapes";
import type { ReplaySource } from "../../protocol/operations/turns";
import { sessionObject, submitOnce } from "./session-reads";

/** The source's files as a fork's creation takes them (the session object's own type, through the binding's). */
type ForkFiles = NonNullable<Parameters<ReturnType<Env["SESSIONS"]["get"]>["create"]>[0]["fork"]>["files"];

export interface ReplayOpening {
  /** The source session and its recorded turn. */
  sid: string;
  turnId: string;
  /** What replayTurn on the source answered. */
  source: ReplaySource;
  execId: string;
  agent: AgentConfig;
  agentVersion: { version: number; label: string | null } | null;
  tools: "recorded" | "live";
  owner: string | null;
  /** Metadata added to the source's (an eval case's run and index). */
  metadata?: Record<string, unknown>;
  /** Who submits the turn. */
  by: string;
  /** A replay session that already exists is taken as it is (an eval case resumed after a restart). */
  resume?: boolean;
}

/** Opens the replay session and submits the recorded turn in it; answers the turn's id. */
export async function openReplay(env: Pick<Env, "SESSIONS">, o: ReplayOpening): Promise<string> {
  const { source } = o;
  // The replay holds the source's conversation and turn: erasing the source erases it too.
  unwrap(await sessionObject(env, o.sid).addDerived(o.execId, "replay"));
  // The ledger's "all" answers its rows (the stub's RPC typing merges the answers of every file operation).
  const files = unwrap(await sessionObject(env, o.sid).fileOp("all")) as ForkFiles;
  const created = (await sessionObject(env, o.execId).create({
    session_id: o.execId,
    agent: o.agent,
    agent_version: o.agentVersion,
    policy: source.policy,
    metadata: { ...(JSON.parse(source.metadata) as Record<string, unknown>), ...o.metadata },
    owner: o.owner,
    // No resource: a replay reads memory only as the turn recorded it (its recall hits and tool results) and writes none.
    // The replayed turn's files, and those the earlier conversation names, become the replay session's own, as a fork's.
    fork: { from_session: o.sid, at_sequence: source.at_sequence, messages_json: source.messages_json, paused_json: null, files },
    replay: {
      source_session: o.sid,
      source_turn_id: o.turnId,
      tools: o.tools,
      recording_json: source.recording_json,
      original_json: source.original_json,
    },
  })) as Result<unknown>;
  if (!created.ok && !(o.resume && created.error.code === "conflict")) unwrap(created);
  const parts = source.files?.map((f) => ({ type: "file" as const, file_id: f.file_id, ...(f.filename ? { filename: f.filename } : {}) }));
  const input = parts ? [{ type: "text" as const, text: source.input }, ...parts] : source.input;
  return submitOnce(env, o.execId, input, REPLAY_TURN_KEY, o.by);
}
