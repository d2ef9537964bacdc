// ListTasks (docs/guides/a2a.md): the tasks of one context (a session), or without contextId those of every
// session of the agent the caller reaches, found through the session index (src/objects/index). Sessions come
// newest first, and in each its tasks newest first; a page reads at most SCAN tasks, so a status filter that
// matches little answers fewer than pageSize tasks with a nextPageToken to go on from.
import { listAcross, requestLayout } from "../objects/index/index-shards";
import { ListTasksParams, RpcError, type Task } from "../protocol/a2a";
import { ApiError } from "../protocol/errors";
import type { SessionListQuery } from "../protocol/session-list";
import { ofAgent, paramsOf, type RpcCall, read, taskOf, trimmed } from "./a2a-tasks";
import { callSession } from "./http";
import { decodeCursor, encodeCursor } from "./keyset-cursor";

type Params = ReturnType<typeof ListTasksParams.parse>;
interface TaskPage {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** Tasks a page reads at most (each is a read of its session). */
const SCAN = 100;
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

/** The task of a turn as the listing shows it, or null when the status filter leaves it out. */
async function listed(call: RpcCall, p: Params, session_id: string, turn_id: string): Promise<Task | null> {
  const task = trimmed(await taskOf(await read(call, { session_id, turn_id }, "object")), p.historyLength);
  if (p.status && task.status.state !== p.status) return null;
  return p.includeArtifacts ? task : { ...task, artifacts: [] };
}

/** ListTasks of one context (a session), newest first. */
async function contextTasks(call: RpcCall, p: Params, sid: string): Promise<TaskPage> {
  const size = p.pageSize ?? 20;
  if (!(await ofAgent(call, sid))) return { tasks: [], nextPageToken: "", pageSize: size, totalSize: 0 };
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

/** Where a page without contextId goes on: a session (by its place in the index) and the tasks of it already listed. */
interface Position {
  created_at: number;
  session_id: string;
  skip: number;
}

function position(token: string): Position {
  try {
    const [created_at, rest] = decodeCursor(token);
    const [session_id = "", skip = ""] = rest.split("/");
    if (/^ses_/.test(session_id) && /^\d+$/.test(skip)) return { created_at, session_id, skip: Number(skip) };
  } catch {
    // reported below
  }
  throw new RpcError("invalidParams", "params.pageToken: is not a token ListTasks gave");
}

/** The sessions of the agent the caller reaches, newest first, from the index (from `from` on when given). */
async function* sessions(call: RpcCall, from: Position | null): AsyncGenerator<Position> {
  const { principal, agent, env } = call;
  if (principal.kind === "token" && principal.session_id) {
    // A token bound to one session lists that session's tasks only.
    if (await ofAgent(call, principal.session_id)) yield { created_at: 0, session_id: principal.session_id, skip: from?.skip ?? 0 };
    return;
  }
  if (from) yield from;
  const query: SessionListQuery = { opened_agent: agent, metadata: [], limit: INDEX_PAGE };
  if (principal.kind === "token") query.owner = principal.subject;
  if (from) query.before = [from.created_at, from.session_id];
  const layout = requestLayout(env, undefined);
  for (;;) {
    const rows = await listAcross(env, layout, query);
    for (const r of rows) yield { created_at: r.created_at, session_id: r.session_id, skip: 0 };
    const last = rows.at(-1);
    if (rows.length < INDEX_PAGE || !last) return;
    query.before = [last.created_at, last.session_id];
  }
}

/** The tasks the index counts for the caller's sessions of the agent (those that ended, whatever their status). */
async function indexedTotal(call: RpcCall): Promise<number> {
  let total = 0;
  const { principal } = call;
  if (principal.kind === "token" && principal.session_id)
    return (await ofAgent(call, principal.session_id)) ? (await turnsOf(call, principal.session_id)).length : 0;
  const query: SessionListQuery = { opened_agent: call.agent, metadata: [], limit: 100 };
  if (principal.kind === "token") query.owner = principal.subject;
  for (;;) {
    const rows = await listAcross(call.env, requestLayout(call.env, undefined), query);
    total += rows.reduce((n, r) => n + r.turns, 0);
    const last = rows.at(-1);
    if (rows.length < 100 || !last) return total;
    query.before = [last.created_at, last.session_id];
  }
}

/** ListTasks across the agent's sessions the caller reaches. */
async function agentTasks(call: RpcCall, p: Params): Promise<TaskPage> {
  const size = p.pageSize ?? 20;
  const tasks: Task[] = [];
  let scanned = 0;
  for await (const s of sessions(call, p.pageToken ? position(p.pageToken) : null)) {
    const turns = await turnsOf(call, s.session_id);
    for (let i = s.skip; i < turns.length; i++) {
      if (tasks.length === size || scanned === SCAN) {
        return { tasks, nextPageToken: encodeCursor(s.created_at, `${s.session_id}/${i}`), pageSize: size, totalSize: await indexedTotal(call) };
      }
      scanned++;
      const task = await listed(call, p, s.session_id, turns[i]!);
      if (task) tasks.push(task);
    }
  }
  return { tasks, nextPageToken: "", pageSize: size, totalSize: await indexedTotal(call) };
}

/** ListTasks: of one context when contextId is given, else across the agent's sessions the caller reaches. */
export async function listTasks(call: RpcCall, raw: unknown): Promise<TaskPage> {
  const p = paramsOf(ListTasksParams, raw);
  return p.contextId ? contextTasks(call, p, p.contextId) : agentTasks(call, p);
}
