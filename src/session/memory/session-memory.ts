// The session's side of its resource's memory (docs/guides/memory.md): the working memory shown at a
// turn's start, the port the memory tools use (each change a memory.updated event), and the recall index fed
// with each ended turn (embedded first when the agent has an embedding model), off the turn's path and retried
// from the alarm until it lands (like the session index).
import { embedMany } from "ai";
import { resolveEmbeddingModel } from "../../engine/models";
import { type ResourceMemoryPort, ToolError } from "../../engine/tools/types";
import { fused } from "../../objects/memory/recall-index";
import { resourceMemory } from "../../objects/memory/resource-memory-object";
import type { AgentConfig } from "../../protocol/agent-config";
import { type EventDraft, isTerminalTurnEvent } from "../../protocol/events";
import type { MemoryLoaded, RecallEntry, RecallHit } from "../../protocol/memory";
import { providerEnv } from "../../providers";
import type { Capability } from "../capability";
import type { LogHost, SettingsHost, TimerHost, TurnsHost } from "../hosts";
import type { SessionStore } from "../store/session-store";

/** Alarm entries `recall:<turn_id>`: an ended turn whose messages the recall index has not taken yet. */
const RECALL = "recall:";
const RETRY_MS = [1_000, 5_000, 30_000, 120_000, 600_000];

/** What feeding the recall index uses: the ended turn, and its alarm entry for retries. */
type RecallSession = SettingsHost & LogHost & TurnsHost & TimerHost;

/** Where an agent's working memory lives in its resource's object: "" for the resource's own, else the agent's name. */
export function workingScope(config: AgentConfig): { scope: string; agent: string | null } {
  return config.memory?.working?.scope === "agent" ? { scope: config.name, agent: config.name } : { scope: "", agent: null };
}

/** The memory object of the session's resource (null: the session belongs to none). */
function resourceOf(s: SettingsHost) {
  const rid = s.row().resource_id;
  return rid === null ? null : { rid, stub: resourceMemory(s.bindings(), rid) };
}

/** The working memory a turn of `config` is shown, as memory.loaded records it; null without a resource or `memory.working`. */
export async function workingMemoryFor(s: SettingsHost, config: AgentConfig): Promise<(MemoryLoaded & { document: Record<string, unknown> }) | null> {
  const working = config.memory?.working;
  const target = resourceOf(s);
  if (!working || !target) return null;
  const { scope, agent } = workingScope(config);
  const stored = await target.stub.working(scope, working.template);
  return { resource_id: target.rid, agent, version: stored.version, document: JSON.parse(stored.json) as Record<string, unknown> };
}

/** What recording working memory once per change reads of the log. */
type LoadedLog = Pick<SessionStore, "lastMemoryLoaded" | "readEvents">;

/** The document a memory.loaded payload showed: its own, or the one of the event it points at (undefined: not in the log). */
function heldDocument(log: Pick<LoadedLog, "readEvents">, loaded: MemoryLoaded): Record<string, unknown> | undefined {
  if (loaded.document) return loaded.document;
  const held = log.readEvents((loaded.document_at ?? 0) - 1, 1)[0];
  return held?.type === "memory.loaded" ? (JSON.parse(held.body) as { payload: MemoryLoaded }).payload.document : undefined;
}

/** A memory.loaded payload with its document: one recorded as unchanged takes it from the event it points at. */
export function withDocument(log: Pick<LoadedLog, "readEvents">, loaded: MemoryLoaded): MemoryLoaded & { document: Record<string, unknown> } {
  const document = heldDocument(log, loaded);
  if (!document) throw new Error(`memory.loaded #${loaded.document_at}, which holds the document shown, is not in the session's log`);
  const { document_at: _, ...rest } = loaded;
  return { ...rest, document };
}

/**
 * `loaded` as memory.loaded records it: the document only when it changed since the session's last memory.loaded
 * of the same resource and agent, else `document_at` pointing at the event that holds it (each turn would
 * otherwise copy the whole document into the log).
 */
export function recordedOnce(log: LoadedLog, loaded: MemoryLoaded & { document: Record<string, unknown> }): MemoryLoaded {
  const last = log.lastMemoryLoaded(loaded.agent);
  if (!last || last.payload.resource_id !== loaded.resource_id) return loaded;
  const before = heldDocument(log, last.payload);
  if (!before || JSON.stringify(before) !== JSON.stringify(loaded.document)) return loaded;
  const { document: _, ...rest } = loaded;
  return { ...rest, document_at: last.payload.document_at ?? last.sequence };
}

/**
 * The latest embeddings computed, by session, model and text: a turn's input is embedded once, by its automatic
 * recall, and that vector is what the recall index takes at the turn's end (and again when that write is retried).
 */
const EMBEDDED = new Map<string, number[]>();
const EMBEDDED_MAX = 64;

/** Embeddings with the session agent's memory.recall.embedding_model, in order; undefined without one. Those not held are asked in one call. */
async function embedAll(s: SettingsHost, texts: string[]): Promise<number[][] | undefined> {
  const spec = s.agent().memory?.recall?.embedding_model;
  if (!spec || texts.length === 0) return undefined;
  const key = (text: string) => `${s.row().session_id}\u0000${spec}\u0000${text}`;
  // What is held is taken now: other calls may push it out while this one waits for the model.
  const held = new Map(texts.flatMap((t) => (EMBEDDED.has(key(t)) ? [[t, EMBEDDED.get(key(t))!] as const] : [])));
  const missing = [...new Set(texts.filter((t) => !held.has(t)))];
  if (missing.length > 0) {
    const { embeddings } = await embedMany({ model: resolveEmbeddingModel(spec, providerEnv(s.bindings())), values: missing, maxRetries: 1 });
    for (const [i, text] of missing.entries()) {
      held.set(text, embeddings[i]!);
      EMBEDDED.set(key(text), embeddings[i]!);
      // The oldest leaves first (a Map keeps insertion order).
      if (EMBEDDED.size > EMBEDDED_MAX) EMBEDDED.delete(EMBEDDED.keys().next().value!);
    }
  }
  return texts.map((t) => held.get(t)!);
}

/**
 * The resource's best matches for `query`, by words and (with an embedding model) meaning; `exceptSession` left
 * out. The search by words runs in the resource's object while the query is being embedded; the two rankings
 * are fused here as the object's own search fuses them.
 */
async function search(s: SettingsHost, stub: ReturnType<typeof resourceMemory>, query: string, limit: number, exceptSession?: string) {
  const scope = { except: exceptSession };
  if (!s.agent().memory?.recall?.embedding_model) return stub.search(query, limit, scope);
  const words = stub.searchWords(query, limit * 2, scope);
  // Awaited with the embedding, so a failing search by words is not left unobserved.
  const [vector, byWords] = await Promise.all([embedAll(s, [query]).then((v) => v![0]!), words]);
  return fused(byWords, await stub.searchMeaning(vector, limit, scope), limit);
}

/** The resource's best matches for `query` from its other sessions, for automatic recall (null: the session has no resource). */
export async function recallFor(s: SettingsHost, query: string, limit: number): Promise<{ resource_id: string; hits: RecallHit[] } | null> {
  const target = resourceOf(s);
  return target ? { resource_id: target.rid, hits: await search(s, target.stub, query, limit, s.row().session_id) } : null;
}

/** The memory tools' port for one turn; `emit` records memory.updated in the turn (undefined: no resource). */
export function resourcePort(s: SettingsHost, turnId: string, emit: (drafts: EventDraft[]) => void): ResourceMemoryPort | undefined {
  const target = resourceOf(s);
  if (!target) return undefined;
  return {
    updateWorking: async (patch, toolCallId) => {
      const config = s.agent();
      const working = config.memory?.working;
      const { scope, agent } = workingScope(config);
      const out = await target.stub.write({ scope, kind: "patch", value: patch, schema: working?.schema, template: working?.template });
      if (!out.ok) throw new ToolError(`The working memory was not changed: ${out.problems.map((p) => `${p.pointer || "/"}: ${p.reason}`).join("; ")}`);
      emit([
        { type: "memory.updated", turn_id: turnId, tool_call_id: toolCallId, payload: { resource_id: target.rid, agent, version: out.stored.version, patch } },
      ]);
      return { version: out.stored.version, document: JSON.parse(out.stored.json) as unknown };
    },
    recall: (query, limit) => search(s, target.stub, query, limit),
  };
}

/** Feeds the recall index with the session's ended turns. */
export class RecallIndexer {
  private failures = 0;

  constructor(private readonly s: RecallSession) {}

  /** The ended turn's messages, as the recall index takes them. */
  private entries(turnId: string): RecallEntry[] {
    const turn = this.s.store.turn(turnId);
    const end = this.s.store.terminalEvent(turnId);
    if (!turn || !end) return [];
    const base = { session_id: this.s.row().session_id, turn_id: turnId, at: end.timestamp };
    const entries: RecallEntry[] = [{ ...base, role: "user", text: turn.input }];
    const output = "output" in end.payload ? end.payload.output : undefined;
    if (output !== undefined && output !== null && output !== "") {
      entries.push({ ...base, role: "assistant", text: typeof output === "string" ? output : JSON.stringify(output) });
    }
    return entries;
  }

  /** Sends the turn's messages to the index; on failure, an alarm entry retries it with backoff. */
  async index(turnId: string): Promise<void> {
    const target = resourceOf(this.s);
    if (!target) return;
    const entry = `${RECALL}${turnId}`;
    try {
      const entries = this.entries(turnId);
      // Embedded here, so a failing embedding model is retried with the write.
      const vectors = await embedAll(
        this.s,
        entries.map((e) => e.text),
      );
      await target.stub.index(vectors ? entries.map((e, i) => ({ ...e, vector: vectors[i]! })) : entries);
      this.failures = 0;
      this.s.store.timers.unschedule(entry);
    } catch (err) {
      console.error("recall index write failed; retrying from the alarm", err);
      const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)]!;
      this.failures += 1;
      try {
        this.s.store.timers.schedule(entry, Date.now() + delay);
        this.s.armAlarm();
      } catch {
        // the session was erased meanwhile: nothing left to index
      }
    }
  }

  /** Its alarm kind (an index write to retry) and its reaction to commits: each ended turn is indexed in a later task. */
  capability() {
    return {
      alarms: [{ kind: RECALL, prefix: true, fire: (_now, turnId) => this.index(turnId) }],
      committed: (events) => {
        if (this.s.row().resource_id === null) return;
        for (const e of events) {
          if (!isTerminalTurnEvent(e.type)) continue;
          const { turn_id } = JSON.parse(e.body) as { turn_id?: string };
          if (turn_id) setTimeout(() => void this.index(turn_id), 0);
        }
      },
      // The session's turns leave its resource's recall index.
      erase: async () => {
        const { resource_id, session_id } = this.s.row();
        if (resource_id !== null) await resourceMemory(this.s.bindings(), resource_id).forgetSession(session_id);
      },
    } satisfies Capability;
  }
}
