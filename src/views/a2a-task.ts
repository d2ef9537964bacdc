// An A2A task (docs/guides/a2a.md), folded from its turn's events: the Task object and the stream of
// StreamResponse events (the task at its submission, status updates, the answer's text as artifact chunks).
// A task is a turn, its contextId the session; a pause for approvals or questions is TASK_STATE_INPUT_REQUIRED
// and the decisions that continue it make it WORKING again. The fold is pure: the same log gives the same
// events with the same indexes, so a stream resumed after event N (even after a restart) folds again and
// sends what follows N.
import type { A2aMessage, Artifact, Part, StreamResponse, Task, TaskState } from "../protocol/a2a";
import type { EventOf, RuntimeEvent } from "../protocol/events";
import { fileUrl } from "../protocol/input-parts";
import { TurnActivity } from "./turn-activity";

const HEX = "[0-9a-f]{24}";
const TASK_ID = new RegExp(`^task_(${HEX})(${HEX})$`);

export interface TaskRef {
  session_id: string;
  turn_id: string;
}

/** A task's id: its session's and its turn's (no table maps it). */
export const taskId = ({ session_id, turn_id }: TaskRef): string => `task_${session_id.replace(/^ses_/, "")}${turn_id.replace(/^trn_/, "")}`;

/** The session and turn of a task id, or null when it is none of this runtime's. */
export function parseTaskId(id: string): TaskRef | null {
  const m = TASK_ID.exec(id);
  return m ? { session_id: `ses_${m[1]}`, turn_id: `trn_${m[2]}` } : null;
}

/** A stream event with its index in the task's stream (the SSE id a client resumes after). */
export interface IndexedEvent {
  index: number;
  event: StreamResponse;
}

const iso = (ms: number) => new Date(ms).toISOString();
const textOf = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
/** A message's id: its event's sequence in its session, so the same message keeps its id and none repeats across contexts. */
const messageId = (ref: TaskRef, sequence: number) => `msg_${ref.session_id.replace(/^ses_/, "")}_${sequence}`;

/** The input of a turn as the user's message (text, and its files as file parts with the session file's URL). */
function userMessage(e: EventOf<"turn.submitted">, ref: TaskRef, id: string, origin: string): A2aMessage {
  const parts: Part[] = [];
  if (e.payload.input) parts.push({ text: e.payload.input });
  for (const f of e.payload.files ?? []) {
    parts.push({ url: fileUrl(origin, ref.session_id, f.file_id), mediaType: f.media_type, ...(f.filename ? { filename: f.filename } : {}) });
  }
  return { messageId: messageId(ref, e.sequence), contextId: ref.session_id, taskId: id, role: "ROLE_USER", parts: parts.length ? parts : [{ text: "" }] };
}

/** What the paused turn waits for, as the agent's message of the INPUT_REQUIRED status. */
function waitingMessage(waiting: EventOf<"action.required">[], ref: TaskRef, id: string, sequence: number): A2aMessage {
  const lines = waiting.map((a) =>
    a.payload.kind === "user_input" ? (a.payload.question ?? "The agent asks a question") : `Approve the call of ${a.payload.tool_name}? (approve or reject)`,
  );
  const actions = waiting.map((a) => ({
    action_id: a.action_id,
    kind: a.payload.kind,
    tool_name: a.payload.tool_name,
    args: a.payload.args,
    ...(a.payload.question ? { question: a.payload.question } : {}),
    ...(a.payload.response_schema ? { response_schema: a.payload.response_schema } : {}),
  }));
  return {
    messageId: messageId(ref, sequence),
    contextId: ref.session_id,
    taskId: id,
    role: "ROLE_AGENT",
    parts: [{ text: lines.join("\n") }, { data: { actions }, mediaType: "application/json" }],
  };
}

export class A2aTaskFold {
  readonly task: Task;
  private next = 0;
  private readonly activity = new TurnActivity();
  private readonly awaiting = this.activity.awaiting;
  /** Actions an INPUT_REQUIRED status named already. */
  private readonly announced = new Set<string>();
  /** The artifact the answer's text is being written into (one per model call that writes text). */
  private open: Artifact | null = null;
  private texts = 0;

  /** `origin`: the runtime's, as the request reached it: file parts carry absolute URLs under it. */
  constructor(
    readonly ref: TaskRef,
    private readonly origin: string,
  ) {
    const id = taskId(ref);
    this.task = { id, contextId: ref.session_id, status: { state: "TASK_STATE_SUBMITTED", timestamp: iso(0) }, artifacts: [], history: [] };
  }

  get state(): TaskState {
    return this.task.status.state;
  }

  /** How many stream events the fold made so far. */
  get count(): number {
    return this.next;
  }

  /** The artifact the answer's text is being written into now, or null (a push config sends it whole once closed). */
  get writing(): Artifact | null {
    return this.open;
  }

  /** The actions the task waits for (its INPUT_REQUIRED status names them). */
  waitingFor(): string[] {
    return [...this.awaiting.keys()];
  }

  /** The stream events `e` makes (none for another turn's event). */
  push(e: RuntimeEvent): IndexedEvent[] {
    if (e.turn_id !== this.ref.turn_id) return [];
    const out: IndexedEvent[] = [];
    this.activity.track(e);
    const root = (e.depth ?? 0) === 0;
    switch (e.type) {
      case "turn.submitted":
        this.task.history.push(userMessage(e, this.ref, this.task.id, this.origin));
        this.task.status = { state: "TASK_STATE_SUBMITTED", timestamp: iso(e.timestamp) };
        this.emit({ task: structuredClone(this.task) }, out);
        break;
      case "turn.started":
        this.status("TASK_STATE_WORKING", e, out);
        break;
      case "model.delta":
        if (root) this.text(e.payload.text, out);
        break;
      case "model.completed":
        if (root) this.open = null;
        break;
      case "artifact.created": {
        // A file a tool returned (at any depth): an artifact of its own, its part the session file's URL.
        const { file_id, media_type, filename } = e.payload;
        const part: Part = { url: fileUrl(this.origin, this.ref.session_id, file_id), mediaType: media_type, ...(filename ? { filename } : {}) };
        this.artifact({ artifactId: `file-${file_id}`, name: filename ?? file_id, parts: [part] }, false, true, out);
        break;
      }
      case "action.resolved":
        if (this.state === "TASK_STATE_INPUT_REQUIRED" && this.awaiting.size === 0) this.status("TASK_STATE_WORKING", e, out);
        break;
      case "turn.completed": {
        const { output } = e.payload;
        if (this.texts === 0 && output !== undefined && output !== null && output !== "") {
          const part: Part = typeof output === "string" ? { text: output } : { data: output, mediaType: "application/json" };
          this.artifact({ artifactId: "output", name: "output", parts: [part] }, false, true, out);
        }
        this.status("TASK_STATE_COMPLETED", e, out);
        break;
      }
      case "turn.failed":
        this.status("TASK_STATE_FAILED", e, out, `${e.payload.error.code}: ${e.payload.error.message}`);
        break;
      case "turn.cancelled":
        this.status("TASK_STATE_CANCELED", e, out, e.payload.reason);
        break;
      default:
        break;
    }
    if (e.type !== "action.reminder" && this.paused()) {
      const message = waitingMessage([...this.awaiting.values()], this.ref, this.task.id, e.sequence);
      this.task.status = { state: "TASK_STATE_INPUT_REQUIRED", timestamp: iso(e.timestamp), message };
      this.emitStatus(out);
    }
    return out;
  }

  /** The turn waits for actions with nothing else of it under way, and some of them were not announced yet. */
  private paused(): boolean {
    if (this.ended() || !this.activity.paused()) return false;
    const fresh = this.waitingFor().filter((id) => !this.announced.has(id));
    for (const id of fresh) this.announced.add(id);
    return fresh.length > 0;
  }

  private ended(): boolean {
    return this.state === "TASK_STATE_COMPLETED" || this.state === "TASK_STATE_FAILED" || this.state === "TASK_STATE_CANCELED";
  }

  private text(delta: string, out: IndexedEvent[]): void {
    const append = this.open !== null;
    if (!this.open) {
      this.open = { artifactId: `text-${++this.texts}`, name: "answer", parts: [{ text: "" }] };
      this.task.artifacts.push(this.open);
    }
    const part = this.open.parts[0]!;
    part.text = (part.text ?? "") + delta;
    this.emit(
      {
        artifactUpdate: {
          taskId: this.task.id,
          contextId: this.ref.session_id,
          artifact: { ...this.open, parts: [{ text: delta }] },
          append,
          lastChunk: false,
        },
      },
      out,
    );
  }

  private artifact(artifact: Artifact, append: boolean, lastChunk: boolean, out: IndexedEvent[]): void {
    this.task.artifacts.push(artifact);
    this.emit({ artifactUpdate: { taskId: this.task.id, contextId: this.ref.session_id, artifact: structuredClone(artifact), append, lastChunk } }, out);
  }

  private status(state: TaskState, e: RuntimeEvent, out: IndexedEvent[], why?: string): void {
    this.task.status = { state, timestamp: iso(e.timestamp) };
    if (why !== undefined) {
      this.task.status.message = {
        messageId: messageId(this.ref, e.sequence),
        contextId: this.ref.session_id,
        taskId: this.task.id,
        role: "ROLE_AGENT",
        parts: [{ text: why }],
      };
    } else if (state === "TASK_STATE_COMPLETED") {
      const output = (e as EventOf<"turn.completed">).payload.output;
      if (output !== undefined && output !== null) {
        this.task.status.message = {
          messageId: messageId(this.ref, e.sequence),
          contextId: this.ref.session_id,
          taskId: this.task.id,
          role: "ROLE_AGENT",
          parts: [{ text: textOf(output) }],
        };
      }
    }
    this.emitStatus(out);
  }

  private emitStatus(out: IndexedEvent[]): void {
    this.emit({ statusUpdate: { taskId: this.task.id, contextId: this.ref.session_id, status: structuredClone(this.task.status) } }, out);
  }

  private emit(event: StreamResponse, out: IndexedEvent[]): void {
    out.push({ index: this.next++, event });
  }
}
