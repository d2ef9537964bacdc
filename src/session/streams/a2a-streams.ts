// The A2A reads of a session (src/routes/a2a.ts forwards them): a task as the log holds it now, or once it
// settles (completed, failed, cancelled, or waiting for input: a blocking SendMessage waits for that), and
// its stream of StreamResponse events as JSON-RPC responses over SSE, from its start, after the event a
// client last saw (Last-Event-ID), or from now (SubscribeToTask: the task as it is, then what follows). All
// are the same fold (src/views/a2a-task.ts) over the task's turn, read from the store, then live from the
// session's SSE stream as the Responses reads do (response-streams.ts).
import { type RpcId, settled, type Task } from "../../protocol/a2a";
import { restError } from "../../protocol/a2a-rest";
import { ApiError } from "../../protocol/errors";
import { A2aTaskFold, type IndexedEvent, parseTaskId } from "../../views/a2a-task";
import { loggedEvents, turnCursor } from "../store/log-reads";
import type { SessionStore } from "../store/session-store";
import { type OpenEvents, sessionEvents } from "./chat-stream";
import { type SseFormat, type SseOptions, sseResponse } from "./sse-writer";

/** The path of the A2A reads on the session object (the Worker's forwarded request). */
export const A2A_PATH = "/a2a";

/**
 * What the Worker asks: the task now, once it settles, or its stream (from the start, after an event, or from
 * now); or every task of the session as it is now (`tasks`: ListTasks across sessions).
 */
export type A2aMode = "object" | "wait" | "stream" | "subscribe" | "tasks";

export interface A2aHost extends Omit<SseOptions, "signal"> {
  store: Pick<SessionStore, "readEvents" | "conversationReads">;
  openEvents: OpenEvents;
  /** Whether the turn still waits for all of `actionIds` and nothing follows `sequence` in the log yet. */
  stillWaiting(turnId: string, actionIds: string[], sequence: number): Promise<boolean>;
}

function located(store: A2aHost["store"], id: string, origin: string): { fold: A2aTaskFold; cursor: number } {
  const ref = parseTaskId(id);
  if (!ref) throw ApiError.notFound("Task", id);
  try {
    return { fold: new A2aTaskFold(ref, origin), cursor: turnCursor(store, ref.turn_id) };
  } catch {
    throw ApiError.notFound("Task", id);
  }
}

/** Whether the stream of `fold` ends here: the task ended, or waits for input nothing answered yet. */
async function ends(fold: A2aTaskFold, host: A2aHost, sequence: number): Promise<boolean> {
  if (!settled(fold.state)) return false;
  return fold.state !== "TASK_STATE_INPUT_REQUIRED" || host.stillWaiting(fold.ref.turn_id, fold.waitingFor(), sequence);
}

/** The fold over what the log holds now, and the sequence of its last event. */
function foldNow(host: A2aHost, id: string, origin: string): { fold: A2aTaskFold; cursor: number; last: number } {
  const { fold, cursor } = located(host.store, id, origin);
  let last = cursor;
  for (const e of loggedEvents(host.store, cursor)) {
    fold.push(e);
    last = e.sequence;
  }
  return { fold, cursor, last };
}

/** The task's stream events, from its start, live until it settles. */
async function* liveEvents(host: A2aHost, id: string, origin: string, signal: AbortSignal): AsyncGenerator<IndexedEvent & { task: Task }> {
  const { fold, cursor } = located(host.store, id, origin);
  for await (const e of sessionEvents(host.openEvents, cursor, signal)) {
    for (const out of fold.push(e)) yield { ...out, task: fold.task };
    if (e.turn_id === fold.ref.turn_id && (await ends(fold, host, e.sequence))) return;
  }
}

/** Every task of the session (each of its turns), folded in one read of the log. */
function allTasks(host: A2aHost, sessionId: string, origin: string): Task[] {
  const folds = new Map<string, A2aTaskFold>();
  for (const e of loggedEvents(host.store, 0)) {
    if (!e.turn_id) continue;
    let fold = folds.get(e.turn_id);
    if (!fold) folds.set(e.turn_id, (fold = new A2aTaskFold({ session_id: sessionId, turn_id: e.turn_id }, origin)));
    fold.push(e);
  }
  return [...folds.values()].map((f) => f.task);
}

/** Answers the Worker's A2A request `request` for this session. */
export async function serveA2a(request: Request, host: A2aHost): Promise<Response> {
  const url = new URL(request.url);
  const id = url.searchParams.get("id") ?? "";
  const mode = url.searchParams.get("mode") as A2aMode;
  // File parts carry absolute URLs under the runtime's origin as the client reached it.
  const origin = url.searchParams.get("origin") ?? "";
  if (mode === "tasks") return Response.json(allTasks(host, url.searchParams.get("session_id") ?? "", origin));
  const now = foldNow(host, id, origin);
  if (mode === "object" || (mode === "wait" && (await ends(now.fold, host, now.last)))) return Response.json(now.fold.task);
  const abort = new AbortController();
  request.signal.addEventListener("abort", () => abort.abort(), { once: true });
  if (mode === "wait") {
    let task = now.fold.task;
    for await (const e of liveEvents(host, id, origin, abort.signal)) task = e.task;
    return Response.json(task);
  }
  // SubscribeToTask begins with the task as it is, numbered as the last event it stands for; a resumed
  // stream (Last-Event-ID) sends what follows the event it names.
  const resumed = url.searchParams.get("after");
  const after = resumed === null ? (mode === "subscribe" ? now.fold.count - 1 : -1) : Number(resumed);
  if (after >= now.fold.count) throw ApiError.validation([{ path: "Last-Event-ID", reason: `is past the task's last event (${now.fold.count - 1})` }]);
  const rpcId = JSON.parse(url.searchParams.get("rpc_id") ?? "null") as RpcId;
  const snapshot = mode === "subscribe" && resumed === null ? [{ index: after, event: { task: structuredClone(now.fold.task) } }] : [];
  const events = (async function* () {
    yield* snapshot;
    if (snapshot.length > 0 && (await ends(now.fold, host, now.last))) return;
    for await (const e of liveEvents(host, id, origin, abort.signal)) if (e.index > after) yield { index: e.index, event: e.event };
  })();
  const format = url.searchParams.get("binding") === "rest" ? REST_FORMAT : rpcFormat(rpcId);
  return sseResponse(events, abort, { ...host, signal: request.signal }, format);
}

const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" };

/** JSON-RPC over SSE: each event a JSON-RPC response with the StreamResponse as its result, its index as `id:`. */
function rpcFormat(rpcId: RpcId): SseFormat<IndexedEvent> {
  return {
    name: "a2a stream",
    headers: SSE_HEADERS,
    chunk: (e) => `id: ${e.index}\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: rpcId, result: e.event })}\n\n`,
    failure: ({ message }) => `data: ${JSON.stringify({ jsonrpc: "2.0", id: rpcId, error: { code: -32603, message } })}\n\n`,
    end: "",
  };
}

/** HTTP+JSON over SSE: each event the StreamResponse itself, its index as `id:`; a failure an `error` event with the binding's error body. */
const REST_FORMAT: SseFormat<IndexedEvent> = {
  name: "a2a stream",
  headers: SSE_HEADERS,
  chunk: (e) => `id: ${e.index}\ndata: ${JSON.stringify(e.event)}\n\n`,
  failure: ({ message }) => `event: error\ndata: ${JSON.stringify(restError("internal", message).body)}\n\n`,
  end: "",
};
