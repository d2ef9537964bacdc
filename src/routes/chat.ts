// The AI SDK UI message stream protocol (docs/guides/use-chat.md), so an unmodified `useChat` with
// `DefaultChatTransport({ api: base + "/v1/chat" })` talks to a session: POST /v1/chat (a turn, or decisions
// on approvals), GET /v1/chat/:sid/stream (resume) and GET /v1/sessions/:sid/messages (after a reload).
// The streams are projections of the session's log (src/views/ui-stream.ts).

import type { Env } from "../env";
import { randomId } from "../ids";
import { indexShard } from "../objects/index/index-shards";
import { openAgent } from "../objects/registry/agent-resolve";
import { ApiError, unwrap } from "../protocol/errors";
import type { ResponsesRequestRecord } from "../protocol/event-shapes";
import { chat as ops } from "../protocol/operations";
import type { ChatBody } from "../protocol/operations/chat";
import { allows, type Principal } from "../protocol/permissions";
import type { SubmitTurnBody, TurnSubmitted } from "../protocol/wire";
import { CHAT_TURN_PATH, type ChatTurnRequest, type CreateSessionInput } from "../session/object";
import { regenerateKey } from "../views/ui-messages";
import { checkTokenSession } from "./auth";
import { type Answer, chatAction, type Decision, inChatTerms } from "./chat-body";
import { sessionFetch, turnResponse } from "./chat-stream";
import { callSession, router, sessionStub } from "./http";
import { checkMayOpen, newSession, ownerOf } from "./open-session";
import { route } from "./operation-route";

/** When the caller's browser token expires (its streams end then); null for API keys. */
export const expiresAt = (principal: Principal) => (principal.kind === "token" ? principal.expires_at : null);

/** The session a chat id (or an A2A contextId) opened: derived from the id (and a token's subject), so every request naming it finds it. */
export async function derivedSessionId(chatId: string, principal: Principal): Promise<string> {
  const owner = principal.kind === "token" ? principal.subject : "";
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${owner}\u0000${chatId}`)));
  return `ses_${[...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Whether the session exists (and a token may reach it). */
export async function reachable(env: Env, sid: string, principal: Principal): Promise<boolean> {
  try {
    unwrap(await sessionStub(env, sid).access());
  } catch (err) {
    if (err instanceof ApiError && err.code === "not_found") return false;
    throw err;
  }
  if (principal.kind === "token") await checkTokenSession(env, principal, sid);
  return true;
}

/**
 * The session of a chat: `id` itself when it names one, else the session this chat id opened before, else a new
 * one of `agent` (owned by a token's subject), whose id the stream's `start` chunk names. The `input` its first
 * turn will take is checked against the agent before the session is created, so a refused input opens nothing.
 */
async function chatSession(env: Env, principal: Principal, id: string, agent: string | undefined, first?: FirstInput): Promise<string> {
  if (await reachable(env, id, principal)) return id;
  const sid = await derivedSessionId(id, principal);
  if (await reachable(env, sid, principal)) return sid;
  unwrap(await sessionStub(env, sid).create(await newChatSession(env, principal, id, sid, agent, first)));
  return sid;
}

/** The first turn's input of a chat that opens its session, and its text's place in the request. */
interface FirstInput {
  input: { text: string; path: string };
  turn: SubmitTurnBody["input"];
}

/** How a chat with no session yet opens one of `agent`, after the checks that it may (nothing is created here). */
async function newChatSession(
  env: Env,
  principal: Principal,
  id: string,
  sid: string,
  agent: string | undefined,
  first?: FirstInput,
): Promise<CreateSessionInput> {
  if (!agent) throw new ApiError("not_found", `Session '${id}' was not found; send an agent's name as "agent" with the messages to open one`);
  checkMayOpen(principal, agent);
  // An erased session's id stays erased: the same chat id does not bring it back.
  if (await indexShard(env, sid).isErased(sid)) throw new ApiError("not_found", `The session of chat '${id}' was erased`);
  const opened = await openAgent(env, agent, ownerOf(principal));
  return newSession(env, principal, sid, opened, { metadata: { chat_id: id }, ...(first ?? {}) });
}

/**
 * A new turn of a chat and its stream: one call into the session the chat names (`id` itself, else the one
 * this chat id opened), which submits and streams; a chat with no session yet opens it in a second call that
 * also submits and streams.
 */
async function chatTurn(env: Env, principal: Principal, body: ChatBody, turn: SubmitTurnBody, input: FirstInput["input"]): Promise<Response> {
  const derived = await derivedSessionId(body.id, principal);
  const reach = principal.kind === "token" ? { session_id: principal.session_id, subject: principal.subject, agent: principal.agent } : undefined;
  const request: ChatTurnRequest = { reach, by: principal.id, body: turn };
  for (const sid of new Set([body.id, derived])) {
    try {
      return await sessionFetch(env, sid, new URL(`https://session${CHAT_TURN_PATH}`), expiresAt(principal), request);
    } catch (err) {
      // Only the session's own absence moves on (a file or agent the turn names may be missing too).
      if (!ApiError.isNoSession(err)) throw err;
    }
  }
  const create = await newChatSession(env, principal, body.id, derived, body.agent, { input, turn: turn.input });
  return sessionFetch(env, derived, new URL(`https://session${CHAT_TURN_PATH}`), expiresAt(principal), { ...request, create });
}

/**
 * useChat's regenerate(): the turn of the assistant message it dropped (`messageId`, the turn's id), else the
 * session's last turn, is rolled back and answered again (regenerateTurn); with no turn yet it is a new turn.
 */
async function regenerate(env: Env, sid: string, body: ChatBody, key: string, by: Principal, submit: () => Promise<TurnSubmitted>): Promise<string> {
  const dropped = body.messageId && !body.messages.some((m) => m.id === body.messageId) ? body.messageId : undefined;
  const turnId = dropped ?? (await callSession(env, sid, "getSession", { by: by.id })).turns.at(-1)?.turn_id;
  if (!turnId) return (await submit()).turn_id;
  return (await callSession(env, sid, "regenerateTurn", { params: { turn_id: turnId }, body: { idempotency_key: key }, by: by.id })).turn_id;
}

/**
 * Records the decisions and answers and returns their turn and actions. One on an action that is not pending is
 * tried first, so its 404 or 409 comes before anything is recorded; an answer names its question by tool call.
 */
export async function decide(
  env: Env,
  sid: string,
  decisions: Decision[],
  answers: Answer[],
  by: Principal,
  responses?: ResponsesRequestRecord,
): Promise<{ turnId: string; decided: Set<string> }> {
  if (!allows(by, "session.approve")) throw new ApiError("forbidden", "this token may not do session.approve");
  const pendingActions = (await callSession(env, sid, "getThread", { by: by.id })).pending_actions;
  const pending = new Set(pendingActions.map((a) => a.action_id));
  const questions = new Map(pendingActions.filter((a) => a.kind === "user_input").map((a) => [a.tool_call_id, a.action_id]));
  const answered = answers.map((a) => {
    const id = questions.get(a.toolCallId);
    if (!id) throw new ApiError("conflict", `No question waits for tool call '${a.toolCallId}'`);
    return { id, body: { response: a.response } };
  });
  const ordered = [...decisions.filter((d) => !pending.has(d.id)), ...decisions.filter((d) => pending.has(d.id))];
  const bodies = [
    ...ordered.map((d) => ({ id: d.id, body: { decision: d.approved ? ("approve" as const) : ("reject" as const), reason: d.reason } })),
    ...answered,
  ];
  let turnId = "";
  for (const { id, body } of bodies) {
    turnId = (await callSession(env, sid, "resolveAction", { params: { action_id: id }, body, by: by.id, responses })).turn_id;
  }
  return { turnId, decided: new Set(bodies.map((b) => b.id)) };
}

export const chat = router()
  .openapi(route(ops.chat), async (c) => {
    const body = c.req.valid("json");
    const action = chatAction(body);
    const principal = c.get("principal");
    if (action.kind === "decisions") {
      const sid = await chatSession(c.env, principal, body.id, undefined);
      const { turnId, decided } = await decide(c.env, sid, action.decisions, action.answers, principal);
      return turnResponse({ env: c.env, sid, turnId, decided, expiresAt: expiresAt(principal) });
    }
    const input = { text: action.input, path: `messages.${body.messages.length - 1}.parts` };
    // A regenerated answer replaces the last turn; its key names the message it answers again.
    const key = action.regenerate ? regenerateKey(action.userMessageId, randomId("rgn")) : action.userMessageId;
    const parts = action.files.length > 0 ? [{ type: "text" as const, text: action.input }, ...action.files] : action.input;
    const { on_busy, debounce_ms } = body;
    const turn = { input: parts, idempotency_key: key, ...(on_busy ? { on_busy } : {}), ...(debounce_ms ? { debounce_ms } : {}) };
    const inChat = (err: unknown) => {
      throw inChatTerms(err, action.filePaths);
    };
    if (!action.regenerate) return chatTurn(c.env, principal, body, turn, input).catch(inChat);
    const sid = await chatSession(c.env, principal, body.id, body.agent, { input, turn: turn.input }).catch(inChat);
    const submit = () => callSession(c.env, sid, "submitTurn", { body: turn, by: principal.id, via: "chat" }).catch(inChat);
    const turn_id = await regenerate(c.env, sid, body, key, principal, submit);
    return turnResponse({ env: c.env, sid, turnId: turn_id, expiresAt: expiresAt(principal) });
  })
  .openapi(route(ops.resumeChat), async (c) => {
    const principal = c.get("principal");
    const sid = await chatSession(c.env, principal, c.req.valid("param").sid, undefined);
    const thread = await callSession(c.env, sid, "getThread", { by: principal.id });
    // A turn waiting for a person has nothing to stream: the client shows the request from its messages.
    if (!thread.active_turn_id || thread.status === "waiting_permission") return c.body(null, 204);
    return turnResponse({ env: c.env, sid, turnId: thread.active_turn_id, expiresAt: expiresAt(principal) });
  });
