// The Open Responses reads of a session (src/routes/responses.ts forwards them): a response's object as the log
// holds it now, or once it ends (a request that is not background waits for that), its input items, and its
// stream from `starting_after`. All are the same fold (src/views/responses-stream.ts) over the response's turn,
// read from the store, then live from the session's SSE stream as the chat stream reads it (chat-stream.ts).
import { ApiError } from "../../protocol/errors";
import { inputItems, parseResponseId, type ResponseRef } from "../../views/response-object";
import { type ResponsesEvent, ResponsesFold } from "../../views/responses-stream";
import { loggedEvents, turnCursor } from "../store/log-reads";
import type { SessionStore } from "../store/session-store";
import { type OpenEvents, sessionEvents } from "./chat-stream";
import { type SseFormat, type SseOptions, sseResponse } from "./sse-writer";

/** The path of the Responses reads on the session object (the Worker's forwarded request). */
export const RESPONSES_PATH = "/responses";

/** What the Worker asks: the response now, once it ended, its input items, or its stream. */
export type ResponsesMode = "object" | "wait" | "input" | "stream";

export interface ResponsesHost extends Omit<SseOptions, "signal"> {
  store: Pick<SessionStore, "readEvents" | "conversationReads">;
  /** The agent the session was opened with: the responses' `model`, with the version its turn ran. */
  model: string;
  openEvents: OpenEvents;
  /** Whether the turn still waits for all of `actionIds` and nothing follows `sequence` in the log yet. */
  stillWaiting(turnId: string, actionIds: string[], sequence: number): Promise<boolean>;
}

/**
 * The `model` of a response: the agent and the version its turn ran (`agent@3`), the session's at the turn's
 * first event (a session moves to another version only between turns); the bare name for an inline agent.
 */
function modelOf(host: ResponsesHost, cursor: number): string {
  const ran = host.store.conversationReads.versionAt(cursor + 1);
  // After a handoff a move names the agent handed to: its versions are not the opened agent's.
  return ran && ran.version !== null && ran.agent === host.model ? `${host.model}@${ran.version}` : host.model;
}

/** The response `id` of this session: its reference and where its turn's events begin. */
function located(store: ResponsesHost["store"], id: string): { ref: ResponseRef; cursor: number } {
  const ref = parseResponseId(id);
  if (!ref) throw ApiError.notFound("Response", id);
  let cursor: number;
  try {
    cursor = turnCursor(store, ref.turn_id);
  } catch {
    throw ApiError.notFound("Response", id);
  }
  if (ref.after !== null && ref.after < cursor) throw ApiError.notFound("Response", id);
  return { ref, cursor };
}

/** Ends the response at a pause nothing follows yet (what a fold of the log later finds there too). */
async function pauseIfWaiting(fold: ResponsesFold, host: ResponsesHost, turnId: string, sequence: number): Promise<ResponsesEvent[]> {
  const paused = fold.pausedOn();
  return paused && (await host.stillWaiting(turnId, paused, sequence)) ? fold.pause() : [];
}

/** The fold over what the log holds now, and how many stream events that made. */
async function foldNow(host: ResponsesHost, id: string, origin: string): Promise<{ fold: ResponsesFold; sent: number; ref: ResponseRef; cursor: number }> {
  const { ref, cursor } = located(host.store, id);
  const fold = new ResponsesFold(ref, id, modelOf(host, cursor), origin);
  let sent = 0;
  let last = cursor;
  for (const e of loggedEvents(host.store, cursor)) {
    sent += fold.push(e).length;
    last = e.sequence;
    if (fold.ended) break;
  }
  if (!fold.ended) sent += (await pauseIfWaiting(fold, host, ref.turn_id, last)).length;
  return { fold, sent, ref, cursor };
}

/** The stream events of the response after its event `startingAfter` (-1: all), live until it ends. */
async function* liveEvents(
  host: ResponsesHost,
  read: { id: string; origin: string },
  ref: ResponseRef,
  cursor: number,
  signal: AbortSignal,
): AsyncGenerator<ResponsesEvent> {
  const fold = new ResponsesFold(ref, read.id, modelOf(host, cursor), read.origin);
  for await (const e of sessionEvents(host.openEvents, cursor, signal)) {
    yield* fold.push(e);
    if (!fold.ended) yield* await pauseIfWaiting(fold, host, ref.turn_id, e.sequence);
    if (fold.ended) return;
  }
}

const json = (value: unknown) => Response.json(value);
const ENDS = new Set(["response.completed", "response.failed", "response.incomplete"]);

/** Answers the Worker's Responses request `request` for this session. */
export async function serveResponses(request: Request, host: ResponsesHost): Promise<Response> {
  const url = new URL(request.url);
  const id = url.searchParams.get("id") ?? "";
  const mode = url.searchParams.get("mode") as ResponsesMode;
  // Files carry absolute URLs under the runtime's origin as the client reached it.
  const origin = url.searchParams.get("origin") ?? "";
  if (mode === "input") {
    const { ref, cursor } = located(host.store, id);
    return json(inputItems(loggedEvents(host.store, cursor), ref, origin));
  }
  const now = await foldNow(host, id, origin);
  if (mode === "object" || (mode === "wait" && now.fold.ended)) return json(now.fold.response);
  const abort = new AbortController();
  request.signal.addEventListener("abort", () => abort.abort(), { once: true });
  if (mode === "wait") {
    let response = now.fold.response;
    for await (const e of liveEvents(host, { id, origin }, now.ref, now.cursor, abort.signal)) if (ENDS.has(e.type)) response = e.response as typeof response;
    return json(response);
  }
  const resumed = url.searchParams.has("last_event_id");
  const startingAfter = Number(url.searchParams.get(resumed ? "last_event_id" : "starting_after") ?? "-1");
  if (startingAfter >= now.sent) {
    throw ApiError.validation([{ path: resumed ? "Last-Event-ID" : "starting_after", reason: `is past the response's last event (${now.sent - 1})` }]);
  }
  const events = (async function* () {
    for await (const e of liveEvents(host, { id, origin }, now.ref, now.cursor, abort.signal)) if (e.sequence_number > startingAfter) yield e;
  })();
  return sseResponse(events, abort, { ...host, signal: request.signal }, responsesFormat(startingAfter));
}

/**
 * Responses SSE: `event:` names, `data:` JSON and the `sequence_number` as `id:` (an EventSource reconnects with
 * it as Last-Event-ID); a failure is an `error` event numbered as the last event sent.
 */
function responsesFormat(startingAfter: number): SseFormat<ResponsesEvent> {
  let last = startingAfter;
  return {
    name: "responses stream",
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
    chunk: (e) => {
      last = e.sequence_number;
      return `event: ${e.type}\ndata: ${JSON.stringify(e)}\nid: ${e.sequence_number}\n\n`;
    },
    failure: ({ code, message }) => `event: error\ndata: ${JSON.stringify({ type: "error", code, message, param: null, sequence_number: last })}\n\n`,
    end: "",
  };
}
