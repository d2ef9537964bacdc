// The Open Responses API (docs/guides/open-responses.md): POST /v1/responses submits a turn (or decides what a
// paused one waits for) and answers the response's object or stream; the other routes read, cancel and erase
// a response. A response id names its session and turn (src/views/response-object.ts): no table maps it. The
// session object folds the log into objects and streams (src/session/streams/response-streams.ts); these
// routes check who may reach the session, and answer every error in the Responses shape.

import type { Context } from "hono";
import type { Env } from "../env";
import { randomId } from "../ids";
import { agentConfig } from "../objects/registry/agent-cache";
import { agentName, type OpenedAgent, openAgent } from "../objects/registry/agent-resolve";
import { parseCursor } from "../protocol/cursor";
import { ApiError, type FieldIssue, unwrap } from "../protocol/errors";
import type { ResponsesRequestRecord } from "../protocol/event-shapes";
import { responses as ops } from "../protocol/operations";
import type { ResponsesRequest } from "../protocol/operations/responses";
import type { Principal } from "../protocol/permissions";
import { RESPONSES_PATH, type ResponsesMode } from "../session/streams/response-streams";
import { type InputItem, parseResponseId, type ResponseObject, type ResponseRef, responseId } from "../views/response-object";
import { decide, expiresAt, reachable } from "./chat";
import { sessionFetch } from "./chat-stream";
import { eraseSessions } from "./erasure";
import { type AppEnv, callSession, router, sessionStub, toApiError } from "./http";
import { checkMayOpen, dropRefused, newSession, ownerOf } from "./open-session";
import { route } from "./operation-route";
import { answerValue, inRequestTerms, type ResponsesInput, responsesInput } from "./responses-input";

const ERROR_TYPES: Record<number, string> = { 401: "authentication_error", 403: "permission_error", 429: "rate_limit_error", 500: "server_error" };

/** The Responses error shape: `code` is the runtime's (docs/reference/errors.md), `param` the first field refused. */
export function responsesError(c: Context, err: ApiError) {
  const first = Array.isArray(err.details) ? (err.details[0] as FieldIssue | undefined) : undefined;
  const error = { message: err.message, type: ERROR_TYPES[err.status] ?? "invalid_request_error", param: first?.path || null, code: err.code };
  return c.json({ error }, err.status as 400);
}

const refused = (path: string, reason: string, code: "not_found" | "validation_failed" = "validation_failed") =>
  new ApiError(code, `${path}: ${reason}`, [{ path, reason }]);

/** The response `id` when it is one of a session the caller may reach; 404 (naming `param`) otherwise. */
async function reach(env: Env, principal: Principal, id: string, param = "response_id"): Promise<ResponseRef> {
  const ref = parseResponseId(id);
  if (!ref || !(await reachable(env, ref.session_id, principal))) throw refused(param, `no response '${id}'`, "not_found");
  return ref;
}

/** Where a resumed stream begins: after `starting_after`, or the Last-Event-ID an EventSource reconnects with (it wins). */
type Cursor = { after: number; name: "starting_after" | "Last-Event-ID" };

/** Reads the response from its session: its object now, once it ends, its input items, or its stream. */
async function read(c: Context<AppEnv>, ref: ResponseRef, mode: ResponsesMode, cursor?: Cursor): Promise<Response> {
  const url = new URL(`https://session${RESPONSES_PATH}`);
  url.searchParams.set("id", responseId(ref));
  url.searchParams.set("mode", mode);
  // Files carry absolute URLs under the runtime's origin as the client reached it.
  url.searchParams.set("origin", new URL(c.req.url).origin);
  if (cursor) url.searchParams.set(cursor.name === "Last-Event-ID" ? "last_event_id" : "starting_after", String(cursor.after));
  return sessionFetch(c.env, ref.session_id, url, expiresAt(c.get("principal")));
}

/** The stream's cursor from the request: Last-Event-ID when the header is there, else starting_after (absent: from the start). */
function streamCursor(lastEventId: string | undefined, startingAfter: number | undefined): Cursor | undefined {
  if (lastEventId === undefined) return startingAfter === undefined ? undefined : { after: startingAfter, name: "starting_after" };
  const after = parseCursor(lastEventId);
  if (after === null) throw refused("Last-Event-ID", "must be a plain non-negative decimal integer");
  return { after, name: "Last-Event-ID" };
}

/** The request's fields its response echoes, recorded with the turn or decisions that begin it. */
const echoed = (body: ResponsesRequest): ResponsesRequestRecord => ({
  previous_response_id: body.previous_response_id ?? null,
  background: body.background ?? false,
  ...(body.metadata ? { metadata: body.metadata } : {}),
  ...(body.max_output_tokens ? { max_output_tokens: body.max_output_tokens } : {}),
});

const object = async (res: Response) => (await res.json()) as ResponseObject;

/**
 * The version `model` names (`agent`, `agent@3`, `agent@label`; a bare name takes the agent's traffic split):
 * an unknown agent, version or label is a 404 naming `model`, as an unknown model is in Responses.
 */
async function openModel(env: Env, model: string, owner: string | null): Promise<OpenedAgent> {
  const agent = agentName(model);
  if (!(await agentConfig(env, agent))) throw refused("model", `no agent '${agent}' is registered`, "not_found");
  try {
    return await openAgent(env, model, owner, "model");
  } catch (err) {
    if (err instanceof ApiError && err.code === "validation_failed") throw refused("model", (err.details as FieldIssue[])[0]!.reason, "not_found");
    throw err;
  }
}

/** `model` on a request that continues a conversation: its agent, and the version it runs when it names one. */
async function checkModel(env: Env, sid: string, model: string, principal: Principal): Promise<void> {
  const { access } = unwrap(await sessionStub(env, sid).access());
  if (access.opened_agent !== agentName(model)) throw refused("model", `must be "${access.opened_agent}", the agent of previous_response_id's conversation`);
  if (!model.includes("@")) return;
  const { version } = await openModel(env, model, ownerOf(principal));
  const runs = (await callSession(env, sid, "getSession", { by: principal.id })).agent_version;
  if (runs !== version) throw refused("model", `names version ${version}, but previous_response_id's conversation runs version ${runs ?? "none"}`);
}

/** A new session of the agent `model` for the first response of a conversation (a token's subject owns it). */
async function openSession(env: Env, principal: Principal, model: string, input: ResponsesInput): Promise<string> {
  checkMayOpen(principal, model);
  const opened = await openModel(env, model, ownerOf(principal));
  if (input.kind === "turn" && input.fileIds.length > 0) throw refused("input", "a new conversation has no files yet: send the file's data or URL");
  const text = input.kind === "turn" ? { text: typeof input.input === "string" ? input.input : JSON.stringify(input.input), path: "input" } : undefined;
  const sid = randomId("ses");
  const turn = input.kind === "turn" ? { turn: input.input } : {};
  unwrap(await sessionStub(env, sid).create(await newSession(env, principal, sid, opened, { metadata: { via: "responses" }, input: text, ...turn })));
  return sid;
}

const waitsFor = (path: string, what: string) =>
  new ApiError("conflict", `${path}: ${what} waits for an answer in previous_response_id's conversation`, [{ path, reason: `${what} waits for an answer` }]);

/** Records the approvals and answers on the paused turn; the response begins after what the log held before them. */
async function continueTurn(
  env: Env,
  sid: string,
  input: Extract<ResponsesInput, { kind: "decisions" }>,
  by: Principal,
  request: ResponsesRequestRecord,
): Promise<ResponseRef> {
  const thread = await callSession(env, sid, "getThread", { by: by.id });
  // What no one waits for is refused naming its field, before anything is recorded.
  for (const d of input.decisions) {
    if (!thread.pending_actions.some((a) => a.action_id === d.id)) throw waitsFor(input.fields.get(d.id)!, `no approval request '${d.id}'`);
  }
  for (const a of input.answers) {
    if (!thread.pending_actions.some((p) => p.kind === "user_input" && p.tool_call_id === a.toolCallId)) {
      throw waitsFor(input.fields.get(a.toolCallId)!, `no question of call '${a.toolCallId}'`);
    }
  }
  const schemas = new Map(thread.pending_actions.map((a) => [a.tool_call_id, a.response_schema as Record<string, unknown> | undefined]));
  const answers = input.answers.map((a) => answerValue(a, schemas.get(a.toolCallId)));
  const { turnId } = await decide(env, sid, input.decisions, answers, by, request);
  return { session_id: sid, turn_id: turnId, after: thread.last_sequence };
}

/** Submits the request's input: a turn of the conversation, or the decisions its paused turn waits for. */
async function submit(env: Env, principal: Principal, body: ResponsesRequest): Promise<ResponseRef> {
  const input = responsesInput(body);
  let sid: string;
  if (body.previous_response_id) {
    sid = (await reach(env, principal, body.previous_response_id, "previous_response_id")).session_id;
    await checkModel(env, sid, body.model, principal);
  } else {
    sid = await openSession(env, principal, body.model, input).catch((err: unknown) => {
      throw input.kind === "turn" ? inRequestTerms(err, input) : err;
    });
  }
  if (input.kind === "decisions") return continueTurn(env, sid, input, principal, echoed(body));
  // A turn of the Responses API queues behind the running one, unless that one waits for a person: the session
  // refuses it then, in the step that would queue it (busy-strategies.ts).
  const { turn_id } = await callSession(env, sid, "submitTurn", { body: { input: input.input }, by: principal.id, responses: echoed(body) }).catch(
    async (err: unknown) => {
      if (!body.previous_response_id) await dropRefused(env, sid, err);
      throw inRequestTerms(err, input);
    },
  );
  return { session_id: sid, turn_id, after: null };
}

/** Whether the turn still waits for what the incomplete response `now` asks (nobody answered it yet). */
async function stillWaits(env: Env, sid: string, now: ResponseObject, by: Principal): Promise<boolean> {
  const pending = (await callSession(env, sid, "getThread", { by: by.id })).pending_actions;
  return now.output.some((i) =>
    i.type === "mcp_approval_request"
      ? pending.some((a) => a.action_id === i.id)
      : i.type === "function_call" && pending.some((a) => a.tool_call_id === i.call_id),
  );
}

export const responses = router();
responses.onError((err, c) => responsesError(c, toApiError(err)));

responses
  .openapi(route(ops.createResponse), async (c) => {
    const body = c.req.valid("json");
    const principal = c.get("principal");
    const ref = await submit(c.env, principal, body);
    if (body.stream) return await read(c, ref, "stream");
    return c.json(await object(await read(c, ref, body.background ? "object" : "wait")), 200);
  })
  .openapi(route(ops.getResponse), async (c) => {
    const principal = c.get("principal");
    const ref = await reach(c.env, principal, c.req.valid("param").response_id);
    const { stream, starting_after } = c.req.valid("query");
    if (stream === "true") return await read(c, ref, "stream", streamCursor(c.req.header("last-event-id"), starting_after));
    if (starting_after !== undefined) throw refused("starting_after", "is read only with stream=true");
    return c.json(await object(await read(c, ref, "object")), 200);
  })
  .openapi(route(ops.cancelResponse), async (c) => {
    const principal = c.get("principal");
    const ref = await reach(c.env, principal, c.req.valid("param").response_id);
    const now = await object(await read(c, ref, "object"));
    // As in Responses, cancelling is idempotent: a cancelled response is answered as it is.
    if (now.status === "cancelled") return c.json(now, 200);
    const running = now.status === "queued" || now.status === "in_progress";
    if (!running && !(now.status === "incomplete" && (await stillWaits(c.env, ref.session_id, now, principal)))) {
      throw new ApiError("conflict", `Response '${now.id}' is ${now.status}: only a queued, in-progress or waiting response can be cancelled`);
    }
    unwrap(await sessionStub(c.env, ref.session_id).cancelTurn(ref.turn_id, "cancelled by the client"));
    return c.json(await object(await read(c, ref, "wait")), 200);
  })
  .openapi(route(ops.deleteResponse), async (c) => {
    const principal = c.get("principal");
    const id = c.req.valid("param").response_id;
    const ref = await reach(c.env, principal, id);
    const { derived } = unwrap(await sessionStub(c.env, ref.session_id).erase());
    const left = await eraseSessions(c.env, derived);
    if (left.length > 0) console.error("responses: sessions made from an erased conversation were left", left);
    return c.json({ id, object: "response" as const, deleted: true as const }, 200);
  })
  .openapi(route(ops.listInputItems), async (c) => {
    const principal = c.get("principal");
    const ref = await reach(c.env, principal, c.req.valid("param").response_id);
    const { limit = 20, order = "desc", after } = c.req.valid("query");
    const all = (await (await read(c, ref, "input")).json()) as InputItem[];
    const ordered = order === "asc" ? all : [...all].reverse();
    const start = after === undefined ? 0 : ordered.findIndex((i) => i.id === after) + 1;
    if (start === 0 && after !== undefined) throw refused("after", `no input item '${after}' in this response`);
    const data = ordered.slice(start, start + limit);
    return c.json(
      { object: "list" as const, data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < ordered.length },
      200,
    );
  });
