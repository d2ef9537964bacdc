// In-memory TurnPorts for driving the engine (src/engine/loop.ts) without a Durable Object.
// They behave like the durable store: every event draft and every checkpointed TurnState is recorded
// as a JSON snapshot at the moment it is written, and writes are refused once the turn is finished or
// interrupted. Tests then assert on the recorded log, in order.

import type { ModelMessage } from "ai";
import type { EventDraft, EventType } from "../../../src/protocol/events";
import type { FileRef } from "../../../src/protocol/input-parts";

/** A recorded event; tests read payloads of many types, so the payload is left untyped here. */
export type Recorded = Omit<EventDraft, "payload"> & { payload: any };

import type { FileBytes } from "../../../src/engine/file-parts";
import type { TurnPorts, TurnSetup } from "../../../src/engine/loop";
import type { Hold, InjectedMessage } from "../../../src/engine/ports";
import type { RecordedDecision, TurnState } from "../../../src/engine/turn-state";

export interface Checkpoint {
  /** How many events were in the log when this state was written (it was written with the last of them). */
  afterEvents: number;
  state: TurnState;
}

export interface RefusedWrite {
  reason: "finished" | "interrupted";
  events: Recorded[];
}

/** What a durable store would keep: a deep copy, and proof that the value is plain JSON. */
export function snapshot<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export class MemoryPorts implements TurnPorts {
  /** Every event written, the terminal one included, in order. */
  readonly events: Recorded[] = [];
  readonly checkpoints: Checkpoint[] = [];
  /** Writes refused because the turn had already finished or been interrupted. A correct engine makes none. */
  readonly refused: RefusedWrite[] = [];
  terminal: Recorded | null = null;
  /** The state handed to finish(). */
  finalState: TurnState | null = null;
  /** Called after each event is recorded (e.g. to interrupt the turn at a given point). */
  onEvent: ((event: Recorded) => void) | null = null;

  private readonly controller = new AbortController();
  readonly signal: AbortSignal = this.controller.signal;
  private clock: number;
  private idCounter = 0;

  /** The in-memory stand-ins for the session's workspace files and memory. */
  readonly files = new Map<string, string>();
  readonly memory = new Map<string, string>();

  readonly tool: TurnPorts["tool"] = {
    session_id: "ses_test",
    fetch: (async () => {
      throw new Error("loop tests make no network calls");
    }) as typeof fetch,
    urlAllowlist: [],
    workspace: {
      read: async (path) => this.files.get(path) ?? null,
      write: async (path, content) => {
        this.files.set(path, content);
        return new TextEncoder().encode(content).byteLength;
      },
      list: async (prefix, limit) =>
        [...this.files]
          .filter(([p]) => p.startsWith(prefix))
          .slice(0, limit)
          .map(([path, c]) => ({ path, bytes: new TextEncoder().encode(c).byteLength })),
      files: async () => [],
      fileBytes: async () => null,
    },
    memory: {
      get: (key) => this.memory.get(key) ?? null,
      set: (key, value) => void this.memory.set(key, value),
      list: (prefix, limit) =>
        [...this.memory]
          .filter(([k]) => k.startsWith(prefix))
          .slice(0, limit)
          .map(([key, v]) => ({ key, bytes: new TextEncoder().encode(v).byteLength })),
    },
  };

  /** Spilled payloads by artifact id, as R2 would keep them. */
  readonly artifacts = new Map<string, string>();

  /** Session files (a turn's attachments) by id, as R2 would keep them. */
  readonly sessionFiles = new Map<string, FileBytes>();

  async readFile(fileId: string): Promise<FileBytes | null> {
    return this.sessionFiles.get(fileId) ?? null;
  }

  async saveFile(file: FileBytes): Promise<FileRef> {
    const file_id = this.newId("file");
    this.sessionFiles.set(file_id, file);
    return { file_id, media_type: file.media_type, filename: file.filename, size: file.bytes.byteLength };
  }

  async spill(content: string): Promise<string> {
    // The session's hold can run out while a spill waits on R2: it writes the held events with the state as it is then.
    if (this.held) this.heldDuringSpill.push(snapshot(this.held));
    const id = this.newId("art");
    this.artifacts.set(id, content);
    return id;
  }

  /** Registered agents, as listAgents() reports them, and what runAgent() answers for each (by agent name). */
  readonly agents = new Map<string, { description: string; answer: (input: string) => { status: "success" | "failed"; output?: unknown; error?: string } }>();
  /** Every runAgent() request, in order. */
  readonly agentRuns: { exec_id: string; agent: string; input: string; timeout_ms: number; depth: number }[] = [];

  async listAgents(): Promise<{ name: string; description: string }[]> {
    return [...this.agents].map(([name, a]) => ({ name, description: a.description }));
  }

  async runAgent(request: { exec_id: string; agent: string; input: string; timeout_ms: number; signal: AbortSignal; depth: number }) {
    const { signal, ...recorded } = request;
    this.agentRuns.push(recorded);
    if (signal.aborted) throw signal.reason;
    const agent = this.agents.get(request.agent);
    return agent ? agent.answer(request.input) : { status: "failed" as const, error: `Agent "${request.agent}" is not registered` };
  }

  /** The session's inbox of live messages, as the session object records them. */
  readonly inbox: InjectedMessage[] = [];
  /** Decisions recorded for approvals (as action.resolved would record them), by action id. */
  readonly recordedDecisions = new Map<string, RecordedDecision>();

  /** Records a live message for the running turn, as POST .../messages does. */
  inject(content: string, message_id = this.newId("msg")): void {
    this.inbox.push({ seq: this.inbox.length + 1, message_id, content });
  }

  injected(after: number): InjectedMessage[] {
    return this.inbox.filter((m) => m.seq > after);
  }

  decisions(): ReadonlyMap<string, RecordedDecision> {
    return this.recordedDecisions;
  }

  /** Events offered to be held and written with the next (`hold`), by tool call id (or type) and how long. */
  readonly gathered: string[] = [];
  /** The state the held events' checkpoint records while they wait (null: nothing held). */
  private held: TurnState | null = null;
  /** The checkpoints a hold that ran out during a spill wrote. */
  readonly heldDuringSpill: TurnState[] = [];

  /** Approval requests, in order. */
  readonly approvals: { action_id: string; tool_name: string; expires_at: number }[] = [];
  /** The state each time the turn suspended to wait for decisions. */
  readonly suspensions: TurnState[] = [];

  requestApproval(event: EventDraft, state: TurnState): void {
    const payload = event.payload as { tool_name: string; expires_at: number };
    this.approvals.push({ action_id: event.action_id!, tool_name: payload.tool_name, expires_at: payload.expires_at });
    this.emit([event], state);
  }

  suspend(state: TurnState): void {
    this.suspensions.push(snapshot(state));
  }

  constructor(startTime = 1_700_000_000_000) {
    this.clock = startTime;
  }

  emit(events: EventDraft[], state?: TurnState, hold?: Hold): void {
    if (this.refuse(events)) throw new Error("turn is no longer writable");
    if (hold) this.gathered.push(...events.map((e) => `${e.tool_call_id ?? e.type} (${hold})`));
    for (const event of events) this.events.push(snapshot(event));
    if (state) this.checkpoints.push({ afterEvents: this.events.length, state: snapshot(state) });
    // Whatever is written next takes what is held; a held emit holds its state until then.
    this.held = hold && state ? state : null;
    for (const event of events) this.onEvent?.(event);
  }

  /** Session-level events written after the turn (tool.result.late), which no end of the turn refuses. */
  recordLate(event: EventDraft): void {
    this.events.push(snapshot(event));
  }

  finish(event: EventDraft, state: TurnState): void {
    if (this.refuse([event])) throw new Error("turn is no longer writable");
    this.events.push(snapshot(event));
    this.terminal = snapshot(event);
    this.finalState = snapshot(state);
  }

  /** Setups that `handoff(agent)` switches to, by agent name; an unknown name fails like an unregistered agent. */
  readonly handoffTargets = new Map<string, TurnSetup>();
  /** Every history the engine asked to store (after compaction). */
  readonly replacedHistories: ModelMessage[][] = [];

  async handoff(agent: string, reason: string | undefined): Promise<TurnSetup> {
    const target = this.handoffTargets.get(agent);
    if (!target) throw new Error(`Agent "${agent}" is not registered`);
    this.emit([{ type: "run.status", payload: { phase: "handoff", to: agent, reason: reason ?? null } }]);
    return target;
  }

  replaceHistory(history: ModelMessage[], event: EventDraft, state: TurnState): void {
    this.replacedHistories.push(snapshot(history));
    this.emit([event], state);
  }

  // Arrow functions: the engine hands `now` to tools unbound.
  now = (): number => this.clock;

  newId = (prefix: string): string => `${prefix}_${++this.idCounter}`;

  /** Moves the clock forward (tools call this to take a known amount of time). */
  advance(ms: number): void {
    this.clock += ms;
  }

  /** Interrupts the turn, as the session object does on `interrupt`. */
  abort(reason: unknown = new Error("interrupted")): void {
    this.controller.abort(reason);
  }

  types(): EventType[] {
    return this.events.map((e) => e.type);
  }

  ofType(type: EventType): Recorded[] {
    return this.events.filter((e) => e.type === type);
  }

  private refuse(events: EventDraft[]): boolean {
    const reason = this.terminal ? "finished" : this.signal.aborted ? "interrupted" : null;
    if (reason) this.refused.push({ reason, events: snapshot(events) });
    return reason !== null;
  }
}
