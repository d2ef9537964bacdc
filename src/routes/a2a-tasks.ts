// The A2A 1.0 methods (docs/guides/a2a.md) over sessions: a task is a turn, its contextId the session. The
// session object folds the log into tasks and streams (src/session/streams/a2a-streams.ts); these handlers
// check who may reach the session and what the request asks, and throw RpcError for A2A's error codes.

import { parseAllowlist, urlAllowed } from "../engine/url-allowlist";
import type { Env } from "../env";
import { randomId } from "../ids";
import { indexShard } from "../objects/index/index-shards";
import { openAgent } from "../objects/registry/agent-resolve";
import { type Message, RpcError, type RpcId, SendMessageParams, type Task, TaskIdParams, TERMINAL_STATES } from "../protocol/a2a";
import { ApiError, unwrap, zodIssues } from "../protocol/errors";
import { type InputPart, inputText } from "../protocol/input-parts";
import { allows, type Principal } from "../protocol/permissions";
import { A2A_PATH, type A2aMode } from "../session/streams/a2a-streams";
import { parseTaskId, type TaskRef, taskId } from "../views/a2a-task";
import { actionAnswers, inMessageTerms, turnInput } from "./a2a-input";
import { addPushConfig } from "./a2a-push";
import { decide, derivedSessionId, expiresAt, reachable } from "./chat";
import { sessionFetch } from "./chat-stream";
import { callSession, sessionStub } from "./http";
import { checkMayOpen, dropRefused, newSession, ownerOf } from "./open-session";

export interface RpcCall {
  env: Env;
  principal: Principal;
  agent: string;
  rpcId: RpcId;
  /** The Last-Event-ID a reconnecting client sends (SubscribeToTask resumes after it). */
  lastEventId: string | undefined;
  /** The runtime's origin as the client reached it: file parts carry absolute URLs under it. */
  origin: string;
  /** The binding the request came by: a stream's events are JSON-RPC responses, or (HTTP+JSON) the events alone. */
  binding: "jsonrpc" | "rest";
}

/** The params of a method, or InvalidParams naming the first field refused. */
export function paramsOf<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } },
  raw: unknown,
): T {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issues = zodIssues(parsed.error.issues, "params");
  throw new RpcError("invalidParams", `${issues[0]!.path}: ${issues[0]!.reason}`, issues);
}

export function need(principal: Principal, permission: "session.submit" | "session.interrupt" | "sessions.create" | "session.approve"): void {
  if (!allows(principal, permission)) throw new ApiError("forbidden", `this caller may not do ${permission}`);
}

/** The task `id` when it is one of this agent's sessions the caller may reach; TaskNotFound otherwise. */
export async function reach(call: RpcCall, id: string): Promise<TaskRef> {
  const ref = parseTaskId(id);
  if (!ref || !(await ofAgent(call, ref.session_id))) throw new RpcError("taskNotFound", `no task '${id}'`);
  return ref;
}

/** Whether the session exists, the caller may reach it, and it was opened with this agent. */
export async function ofAgent(call: RpcCall, sid: string): Promise<boolean> {
  if (!(await reachable(call.env, sid, call.principal))) return false;
  return unwrap(await sessionStub(call.env, sid).access()).access.opened_agent === call.agent;
}

/** Reads the task from its session: its object now, once it settles, or its stream. */
export async function read(call: RpcCall, ref: TaskRef, mode: A2aMode, after?: number): Promise<Response> {
  const url = new URL(`https://session${A2A_PATH}`);
  url.searchParams.set("id", taskId(ref));
  url.searchParams.set("mode", mode);
  url.searchParams.set("rpc_id", JSON.stringify(call.rpcId));
  url.searchParams.set("origin", call.origin);
  url.searchParams.set("binding", call.binding);
  if (after !== undefined) url.searchParams.set("after", String(after));
  try {
    return await sessionFetch(call.env, ref.session_id, url, expiresAt(call.principal));
  } catch (err) {
    if (err instanceof ApiError && err.code === "not_found") throw new RpcError("taskNotFound", `no task '${taskId(ref)}'`);
    if (err instanceof ApiError && err.code === "validation_failed") throw new RpcError("invalidParams", err.message, err.details);
    throw err;
  }
}

export const taskOf = async (res: Response) => (await res.json()) as Task;

/** The task with at most its `historyLength` last messages. */
export function trimmed(task: Task, historyLength: number | undefined): Task {
  return historyLength === undefined ? task : { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) };
}

/** How many erased sessions of one client contextId are stepped over before it is refused (each costs two lookups). */
const MAX_ERASED_CONTEXT_SESSIONS = 20;

/**
 * The session of a client's own contextId, or the id to open it at: derived from it, so every message naming it
 * finds it. An erased session's id is never opened again (its object and index entry stay erased), so a context
 * whose session was erased (a refused first message erases the one it opened) goes on to the next derived id.
 */
async function foreignContext(call: RpcCall, contextId: string, field: string): Promise<{ sid: string; exists: boolean }> {
  for (let k = 0; k < MAX_ERASED_CONTEXT_SESSIONS; k++) {
    const sid = await derivedSessionId(`a2a\u0000${call.agent}\u0000${contextId}${k > 0 ? `\u0000${k}` : ""}`, call.principal);
    if (await ofAgent(call, sid)) return { sid, exists: true };
    if (!(await indexShard(call.env, sid).isErased(sid))) return { sid, exists: false };
  }
  const reason = `${MAX_ERASED_CONTEXT_SESSIONS} sessions of this context were erased; send another contextId`;
  throw new RpcError("invalidParams", `${field}: ${reason}`, [{ path: field, reason }]);
}

/**
 * Where a contextId leads: one of this agent's sessions, the session of a client's own contextId, or the id to open
 * that one at. `field`: where the request carries it (named by a refusal).
 */
export async function contextOf(call: RpcCall, contextId: string, field = "params.message.contextId"): Promise<{ sid: string; exists: boolean }> {
  if (await ofAgent(call, contextId).catch(() => false)) return { sid: contextId, exists: true };
  return foreignContext(call, contextId, field);
}

/**
 * The session a message goes to: its context when there is one, else one opened for it (named after a foreign
 * contextId); `opened` when this request opened it.
 */
async function contextSession(call: RpcCall, message: Message, turn: string | InputPart[]): Promise<{ sid: string; opened: boolean }> {
  const { env, principal, agent } = call;
  const found = message.contextId ? await contextOf(call, message.contextId) : undefined;
  if (found?.exists) return { sid: found.sid, opened: false };
  checkMayOpen(principal, agent);
  // The agent's version as any new session gets it: a label's traffic split, sticky per owner.
  const opened = await openAgent(env, agent, ownerOf(principal));
  const id = found?.sid ?? randomId("ses");
  const metadata = { via: "a2a", ...(message.contextId ? { a2a_context_id: message.contextId } : {}) };
  const input = { text: inputText(turn), path: "params.message" };
  const create = await newSession(env, principal, id, opened, { metadata, input, turn });
  try {
    unwrap(await sessionStub(env, id).create(create));
  } catch (err) {
    // Another first message of the same contextId opened it meanwhile: this message goes to that session.
    if (found && err instanceof ApiError && err.code === "conflict") return { sid: id, opened: false };
    throw err;
  }
  return { sid: id, opened: true };
}

/** A message on a task waiting for input answers what it waits for; on any other task it is refused. */
async function continueTask(call: RpcCall, message: Message): Promise<TaskRef> {
  const ref = await reach(call, message.taskId!);
  if (message.contextId && message.contextId !== ref.session_id) throw new RpcError("invalidParams", "params.message.contextId: is not the task's contextId");
  const task = await taskOf(await read(call, ref, "object"));
  if (task.status.state !== "TASK_STATE_INPUT_REQUIRED") {
    throw new RpcError(
      "unsupportedOperation",
      `task ${task.id} is ${task.status.state}: only a task waiting for input takes a message (send one without taskId to begin a new task)`,
    );
  }
  need(call.principal, "session.approve");
  const thread = await callSession(call.env, ref.session_id, "getThread", { by: call.principal.id });
  const waiting = thread.active_turn_id === ref.turn_id ? thread.pending_actions : [];
  const { decisions, answers } = actionAnswers(message, waiting);
  await decide(call.env, ref.session_id, decisions, answers, call.principal);
  return ref;
}

/** SendMessage and SendStreamingMessage: a new task (a turn), or the answer a waiting task needs. */
export async function sendMessage(call: RpcCall, raw: unknown, stream: boolean): Promise<Response | { task: Task }> {
  const { message, configuration } = paramsOf(SendMessageParams, raw);
  if (message.role !== "ROLE_USER") throw new RpcError("invalidParams", "params.message.role: must be ROLE_USER");
  const pushUrl = configuration?.taskPushNotificationConfig?.url;
  if (pushUrl !== undefined && !urlAllowed(pushUrl, parseAllowlist(call.env.TOOL_URL_ALLOWLIST)))
    throw new RpcError("invalidParams", "params.configuration.taskPushNotificationConfig.url: is not under any TOOL_URL_ALLOWLIST prefix");
  let ref: TaskRef;
  if (message.taskId) {
    ref = await continueTask(call, message);
  } else {
    need(call.principal, "session.submit");
    const input = turnInput(message);
    const { sid, opened } = await contextSession(call, message, input).catch((err: unknown) => {
      throw inMessageTerms(err);
    });
    // The message id keeps a message sent again (a client's retry) from running twice: it answers the same task.
    const body = { input, on_busy: "enqueue" as const, idempotency_key: message.messageId };
    const { turn_id } = await callSession(call.env, sid, "submitTurn", { body, by: call.principal.id }).catch(async (err: unknown) => {
      // A session opened for this message goes with its refusal: the context is unknown again.
      if (opened) await dropRefused(call.env, sid, err);
      throw inMessageTerms(err);
    });
    ref = { session_id: sid, turn_id };
  }
  const push = configuration?.taskPushNotificationConfig;
  if (push) {
    const { tenant: _, ...config } = push;
    await addPushConfig(call, { ...config, taskId: taskId(ref) });
  }
  // A new task's stream begins at its submission; an answered one's with the task as it is now.
  if (stream) return read(call, ref, message.taskId ? "subscribe" : "stream");
  const immediate = configuration?.returnImmediately === true || configuration?.blocking === false;
  return { task: trimmed(await taskOf(await read(call, ref, immediate ? "object" : "wait")), configuration?.historyLength) };
}

export async function getTask(call: RpcCall, raw: unknown): Promise<Task> {
  const { id, historyLength } = paramsOf(TaskIdParams, raw);
  return trimmed(await taskOf(await read(call, await reach(call, id), "object")), historyLength);
}

export async function cancelTask(call: RpcCall, raw: unknown): Promise<Task> {
  const { id } = paramsOf(TaskIdParams, raw);
  const ref = await reach(call, id);
  const now = await taskOf(await read(call, ref, "object"));
  if (TERMINAL_STATES.has(now.status.state)) throw new RpcError("taskNotCancelable", `task ${id} is ${now.status.state}`);
  need(call.principal, "session.interrupt");
  unwrap(await sessionStub(call.env, ref.session_id).cancelTurn(ref.turn_id, "cancelled by the A2A client"));
  return taskOf(await read(call, ref, "wait"));
}

/** SubscribeToTask: the task as it is then what follows, or after the event a reconnecting client names. */
export async function subscribeToTask(call: RpcCall, raw: unknown): Promise<Response> {
  const { id } = paramsOf(TaskIdParams, raw);
  const ref = await reach(call, id);
  const after = call.lastEventId === undefined ? undefined : Number(call.lastEventId);
  if (after !== undefined && !(Number.isSafeInteger(after) && after >= -1)) throw new RpcError("invalidParams", "Last-Event-ID: must be an event index");
  if (after === undefined) {
    const now = await taskOf(await read(call, ref, "object"));
    if (TERMINAL_STATES.has(now.status.state)) throw new RpcError("unsupportedOperation", `task ${id} is ${now.status.state}: read it with GetTask`);
  }
  return read(call, ref, after === undefined ? "subscribe" : "stream", after);
}
