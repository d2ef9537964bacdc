// The ports a running loop talks to the world through, on this session object's storage, R2 and registry.
// Every write checks that its executor still owns the turn: a loop whose turn was taken away (interrupted)
// writes nothing more.

import type { ModelMessage } from "ai";
import type { TurnPorts, TurnSetup } from "../../engine/loop";
import type { TurnState } from "../../engine/turn-state";
import { parseAllowlist } from "../../engine/url-allowlist";
import { randomId } from "../../ids";
import { currentAgent } from "../../objects/registry/agent-cache";
import { registry } from "../../objects/registry/registry-object";
import type { AgentConfig } from "../../protocol/agent-config";
import type { TerminalDraft } from "../../protocol/events";
import { fileLimits } from "../files/file-rules";
import { findFile, storeFile } from "../files/file-store";
import type { FilesHost, LogHost, SettingsHost, SqlHost, TimerHost, TurnsHost } from "../hosts";
import { sqlMemory } from "../memory/memory-store";
import { resourcePort } from "../memory/session-memory";
import { quotaPort } from "../quotas/quota-port";
import { submittedBy, turnSubjects } from "../quotas/quota-subjects";
import { recordWarnings } from "../quotas/quota-turns";
import { runChildSession } from "./orchestration-steps";
import { r2Workspace } from "./workspace-store";

/** Where a spilled payload lives in R2: under its session, so one session cannot read another's. */
export function artifactKey(sessionId: string, artifactId: string): string {
  return `sessions/${sessionId}/artifacts/${artifactId}`;
}

/** Thrown into a loop whose turn was taken away (interrupted) so it stops without writing. */
export class TurnTakenError extends Error {}

export interface Executor {
  turnId: string;
  abort: AbortController;
}

/** What the ports need of the turn runner. */
export interface RunnerHooks {
  /** Whether `exec` still owns its turn. */
  owns(exec: Executor): boolean;
  /** Records the turn's end (the loop's last write). */
  finish(exec: Executor, event: TerminalDraft, state: TurnState): void;
  /** The turn waits for decisions: checkpointed, the executor let go. */
  suspended(exec: Executor, state: TurnState): void;
  /** The session switches to `agent` for the rest of the turn and later turns; returns the setup to go on with. */
  handoff(exec: Executor, agent: AgentConfig, reason: string | undefined, version: number): Promise<TurnSetup>;
  /** The thread history was replaced (compaction). */
  historyReplaced(history: ModelMessage[]): void;
}

/** What the ports use of the session: its commit and settings, the turn's checkpoint, inbox and decisions, and the table the memory tools keep their keys in. */
export type PortsSession = LogHost & TurnsHost & TimerHost & SettingsHost & SqlHost & FilesHost;

export function turnPorts(s: PortsSession, exec: Executor, hooks: RunnerHooks): TurnPorts {
  const { store } = s;
  const env = s.bindings();
  const { turnId } = exec;
  const session_id = s.row().session_id;
  const owned = () => {
    if (!hooks.owns(exec)) throw new TurnTakenError("turn no longer owned by this executor");
  };
  /** A checkpoint; the inbox rows it took into the conversation go with it. */
  const checkpoint = (state: TurnState) => {
    store.saveTurnState(state);
    if (state.messages_taken) store.dropFromInbox(turnId, state.messages_taken);
  };
  return {
    emit: (events, state, hold) => {
      owned();
      if (!state && events.every((e) => e.type === "model.delta")) return s.pending.deltas(events);
      if (state && hold) return s.pending.hold(events, () => checkpoint(state), hold);
      s.commit(events, undefined, state ? { checkpoint: () => checkpoint(state) } : {});
    },
    finish: (event, state) => {
      owned();
      hooks.finish(exec, event, state);
    },
    requestApproval: (event, state) => {
      owned();
      s.commit([event], undefined, { checkpoint: () => checkpoint(state) });
      s.armAlarm();
    },
    suspend: (state) => {
      owned();
      s.commit([], undefined, { checkpoint: () => checkpoint(state) }); // a commit, so events still waiting go first
      hooks.suspended(exec, state);
    },
    handoff: async (agent, reason) => {
      // The agent's newest version, which the session runs (and reports) from now on.
      const current = await currentAgent(env, agent);
      owned();
      if (!current) throw new Error(`Agent "${agent}" is not registered`);
      return hooks.handoff(exec, current.config, reason, current.routing.version);
    },
    replaceHistory: (history, event, state) => {
      owned();
      s.commit([event], () => store.replaceHistory(history), { checkpoint: () => checkpoint(state) });
      hooks.historyReplaced(history);
    },
    // Not the turn's: it may have ended, and this object may run another turn by now.
    recordLate: (event) => s.commit([event]),
    injected: (after) => store.inbox(turnId, after),
    decisions: () => store.decisions(turnId),
    runAgent: (request) => {
      // The child acts for whoever this turn is for: the same key's and end user's quotas count its calls.
      const by = submittedBy(s, turnId);
      const { subject } = turnSubjects(s, turnId, by);
      return runChildSession(env, { session_id, turn_id: turnId, policy: s.policy(), resource_id: s.row().resource_id, owner: subject, by }, request);
    },
    listAgents: async () => {
      const agents: AgentConfig[] = await registry(env).list();
      return agents.map((a) => ({ name: a.name, description: (a.instructions.split("\n")[0] ?? "").slice(0, 200) || "(no instructions)" }));
    },
    readFile: async (fileId) => {
      const file = await findFile(s.fileLedger(), fileId);
      const object = file && (await env.BLOBS.get(file.key));
      return object ? { bytes: new Uint8Array(await object.arrayBuffer()), media_type: file.media_type, filename: file.filename } : null;
    },
    saveFile: async (file) => {
      const info = await storeFile(s.fileLedger(), env.BLOBS, file, fileLimits(env), "file");
      return { file_id: info.file_id, media_type: info.media_type, filename: info.filename, size: info.size };
    },
    spill: async (content, about) => {
      const id = randomId("art");
      await env.BLOBS.put(artifactKey(session_id, id), content, {
        httpMetadata: { contentType: about.content_type },
        customMetadata: { turn_id: about.turn_id, tool_call_id: about.tool_call_id, tool_name: about.tool_name },
      });
      return id;
    },
    now: () => Date.now(),
    newId: randomId,
    signal: exec.abort.signal,
    quota: quotaPort(s, turnId, (warnings) => recordWarnings(s, turnId, warnings)),
    tool: {
      session_id,
      fetch: (input, init) => fetch(input, init),
      urlAllowlist: parseAllowlist(env.TOOL_URL_ALLOWLIST),
      workspace: r2Workspace(env.BLOBS, session_id, s.policy().workspace_root, s.fileLedger()),
      memory: sqlMemory(s.sql), // the memory_* tools' keys, a table only this session's tools write
      resource: resourcePort(s, turnId, (drafts) => {
        owned();
        s.commit(drafts);
      }),
    },
  };
}
