// ListTasks (docs/guides/a2a.md): the tasks of one context (a session), newest first; or without contextId those
// of every session of the agent the caller reaches, found through the session index (src/objects/index), the most
// recently updated first.
import { listAcross, requestLayout } from "../objects/index/index-shards";
import { ListTasksParams, RpcError, type Task } from "../protocol/a2a";
import { ApiError } from "../protocol/errors";
import type { SessionListQuery } from "../protocol/session-list";
import { A2A_PATH } from "../session/streams/a2a-streams";
import { parseTaskId } from "../views/a2a-task";
import { contextOf, ofAgent, paramsOf, type RpcCall, read, taskOf, trimmed } from "./a2a-tasks";
import { expiresAt } from "./chat";
import { sessionFetch } from "./chat-stream";
import { callSession } from "./http";
import { decodeCursor, encodeCursor } from "./keyset-cursor";

type Params = ReturnType<typeof ListTasksParams.parse>;
interface TaskPage {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** Sessions read from the index at a time. */
const INDEX_PAGE = 50;

/** The session's task ids (its turns), newest first; none for a session erased since the index listed it. */
async function turnsOf(call: RpcCall, sid: string): Promise<string[]> {
  try {
    const snapshot = await callSession(call.env, sid, "getSession", { by: call.principal.id });
    return snapshot.turns.map((t) => t.turn_id).reverse();
  } catch (err) {
    if (err instanceof ApiError && err.code === "not_found") return [];
    throw err;
  }
}

/** Whether the task passes the listing's filters: its state, and a status changed after the time given. */
const kept = (p: Params, t: Task): boolean =>
  (!p.status || t.status.state === p.status) && (!p.statusTimestampAfter || Date.parse(t.status.timestamp) > Date.parse(p.statusTimestampAfter));

/** The task of a turn as the listing shows it, or null when the filters leave it out. */
async function listed(call: RpcCall, p: Params, session_id: string, turn_id: string): Promise<Task | null> {
  const task = trimmed(await taskOf(await read(call, { session_id, turn_id }, "object")), p.historyLength);
  if (!kept(p, task)) return null;
  return p.includeArtifacts ? task : { ...task, artifacts: [] };
}

/** ListTasks of one context (a session, or a client's own contextId's), newest first. */
async function contextTasks(call: RpcCall, p: Params, contextId: string): Promise<TaskPage> {
  const size = p.pageSize ?? 20;
  const { sid, exists } = await contextOf(call, contextId, "params.contextId");
  if (!exists) return { tasks: [], nextPageToken: "", pageSize: size, totalSize: 0 };
  const turns = await turnsOf(call, sid);
  const start = p.pageToken ? turns.indexOf(p.pageToken) : 0;
  if (start < 0) throw new RpcError("invalidParams", "params.pageToken: is not a token this context gave");
  const tasks: Task[] = [];
  for (const t of turns.slice(start, start + size)) {
    const task = await listed(call, p, sid, t);
    if (task) tasks.push(task);
  }
  return { tasks, nextPageToken: turns[start + size] ?? "", pageSize: size, totalSize: turns.length };
}

/** A session the listing reads, with when the index last saw it active. */
interface Listed {
  session_id: string;
  last_activity: number;
  /** Its tasks that ended, as the index counts them (totalSize). */
  turns: number;
}

/** The index may learn of a session's change this late: a session is read before any task older than its activity plus this. */
const INDEX_LAG_MS = 2000;

/** The sessions of the agent the caller reaches (a session-bound token's one), most recently active first. */
async function sessions(call: RpcCall): Promise<Listed[]> {
  const { principal, agent, env } = call;
  if (principal.kind === "token" && principal.session_id) {
    // A token bound to one session lists that session's tasks only.
    if (!(await ofAgent(call, principal.session_id))) return [];
    return [{ session_id: principal.session_id, last_activity: Number.POSITIVE_INFINITY, turns: (await turnsOf(call, principal.session_id)).length }];
  }
  const query: SessionListQuery = { opened_agent: agent, metadata: [], limit: INDEX_PAGE };
  if (principal.kind === "token") query.owner = principal.subject;
  const out: Listed[] = [];
  for (;;) {
    const rows = await listAcross(env, requestLayout(env, undefined), query);
    out.push(...rows.map((r) => ({ session_id: r.session_id, last_activity: r.last_activity, turns: r.turns })));
    const last = rows.at(-1);
    if (rows.length < INDEX_PAGE || !last) break;
    query.before = [last.created_at, last.session_id];
  }
  return out.sort((a, b) => b.last_activity - a.last_activity || (a.session_id < b.session_id ? 1 : -1));
}

/** Every task of a session as it is now (none for a session erased since the index listed it). */
async function tasksOf(call: RpcCall, sid: string): Promise<Task[]> {
  const url = new URL(`https://session${A2A_PATH}`);
  url.searchParams.set("mode", "tasks");
  url.searchParams.set("session_id", sid);
  url.searchParams.set("origin", call.origin);
  try {
    return (await (await sessionFetch(call.env, sid, url, expiresAt(call.principal))).json()) as Task[];
  } catch (err) {
    if (err instanceof ApiError && err.code === "not_found") return [];
    throw err;
  }
}

/** A task's place in the listing: its last update (its status's time), then its id, both descending. */
type Key = [number, string];
const keyOf = (t: Task): Key => [Date.parse(t.status.timestamp), t.id];
const newer = (a: Key, b: Key): boolean => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

function position(token: string): Key {
  try {
    const key = decodeCursor(token);
    if (parseTaskId(key[1])) return key;
  } catch {
    // reported below
  }
  throw new RpcError("invalidParams", "params.pageToken: is not a token ListTasks gave");
}

/**
 * ListTasks across the agent's sessions the caller reaches, the most recently updated task first. Sessions are
 * read most recently active first, and their tasks merged: a task is listed once no session yet unread can hold
 * a newer one. The page token is the last task's (time, id), so a page goes on exactly after it however the
 * sessions change meanwhile (a task updated since then moves ahead of the token, and is not listed again).
 */
async function agentTasks(call: RpcCall, p: Params): Promise<TaskPage> {
  const size = p.pageSize ?? 20;
  const after = p.pageToken ? position(p.pageToken) : null;
  const order = await sessions(call);
  const tasks: Task[] = [];
  let pool: Task[] = [];
  let read = 0;
  while (tasks.length < size) {
    const bound = read < order.length ? order[read]!.last_activity + INDEX_LAG_MS : Number.NEGATIVE_INFINITY;
    pool.sort((a, b) => (newer(keyOf(a), keyOf(b)) ? -1 : 1));
    while (pool.length > 0 && tasks.length < size && keyOf(pool[0]!)[0] >= bound) tasks.push(pool.shift()!);
    if (tasks.length === size || read === order.length) break;
    const more = await tasksOf(call, order[read++]!.session_id);
    pool = pool.concat(more.filter((t) => (!after || newer(after, keyOf(t))) && kept(p, t)));
  }
  const more = pool.length > 0 || read < order.length;
  const nextPageToken = tasks.length === size && more ? encodeCursor(...keyOf(tasks.at(-1)!)) : "";
  const shown = tasks.map((t) => (p.includeArtifacts ? trimmed(t, p.historyLength) : { ...trimmed(t, p.historyLength), artifacts: [] }));
  return { tasks: shown, nextPageToken, pageSize: size, totalSize: order.reduce((n, s) => n + s.turns, 0) };
}

/** ListTasks: of one context when contextId is given, else across the agent's sessions the caller reaches. */
export async function listTasks(call: RpcCall, raw: unknown): Promise<TaskPage> {
  const p = paramsOf(ListTasksParams, raw);
  return p.contextId ? contextTasks(call, p, p.contextId) : agentTasks(call, p);
}
