// A2A 1.0's HTTP+JSON binding (docs/guides/a2a.md, "HTTP+JSON"): each declared path (src/protocol/operations/
// a2a-rest.ts) reads its params from the path, the query or the body and calls the same method as the JSON-RPC
// endpoint (a2a-tasks.ts, a2a-list.ts, a2a-push.ts); A2A's errors answer in the binding's shape (src/protocol/a2a-rest.ts).
import type { Context } from "hono";
import { every } from "hono/combine";
import { A2A_VERSION_HEADER, RpcError } from "../protocol/a2a";
import { restError, restNotFound } from "../protocol/a2a-rest";
import { ApiError } from "../protocol/errors";
import { a2aRest as ops } from "../protocol/operations";
import type { Operation } from "../protocol/operations/operation";
import { a2aError, checkVersion, extendedCard, rpcCall, visibleAgent } from "./a2a";
import { listTasks } from "./a2a-list";
import { createPushConfig, deletePushConfig, getPushConfig, listPushConfigs } from "./a2a-push";
import { cancelTask, getTask, type RpcCall, sendMessage, subscribeToTask } from "./a2a-tasks";
import { type AppEnv, router, toApiError } from "./http";
import { guards, route } from "./operation-route";

export const a2aRest = router();

/** What a request gives a method: its path's params (a `{id}:verb` segment's id without the verb), query and body. */
interface Input {
  params: Record<string, string>;
  query: Record<string, string>;
  body: () => Promise<Record<string, unknown>>;
}

/** The Hono path of a declared one: `{id}:cancel` is a param of one segment that ends with the verb. */
const honoPath = (path: string) => path.replace(/\{(\w+)\}(:\w+)?/g, (_, name: string, verb?: string) => (verb ? `:${name}{[^/]+${verb}}` : `:${name}`));

/** The JSON body (none is an empty one); another media type or malformed JSON is the binding's 4xx. */
async function jsonOf(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === "") return {};
  const type = (c.req.header("content-type") ?? "application/json").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json" && !type.endsWith("+json")) throw new RpcError("contentTypeNotSupported", `the body is ${type}: send application/json`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RpcError("parse", "the body is not JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new RpcError("invalidParams", "the body must be a JSON object");
  return body as Record<string, unknown>;
}

/** A query's values as ListTasks and GetTask take them: counts as numbers, flags as booleans. */
function typed(query: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...query };
  // A query holds only text: a value that is no count or flag is refused for what it is, not as a string.
  const refuse = (k: string, reason: string) => new RpcError("invalidParams", `params.${k}: ${reason}`, [{ path: `params.${k}`, reason }]);
  for (const k of ["pageSize", "historyLength"]) {
    if (query[k] === undefined) continue;
    if (!/^\d+$/.test(query[k])) throw refuse(k, "must be an integer at least 0, written as plain decimal digits");
    out[k] = Number(query[k]);
  }
  if (query.includeArtifacts !== undefined) {
    if (query.includeArtifacts !== "true" && query.includeArtifacts !== "false") throw refuse("includeArtifacts", "must be true or false");
    out.includeArtifacts = query.includeArtifacts === "true";
  }
  return out;
}

/** Serves `op` with `run`, answering its result with `status` (a stream's Response as it is). */
function serve(op: Operation, run: (call: RpcCall, input: Input) => Promise<unknown>, status: 200 | 201 | 204 = 200, methods = [op.method]): void {
  const { middleware: _, ...documented } = route(op);
  a2aRest.openAPIRegistry.registerPath(documented);
  const handler = async (c: Context<AppEnv>): Promise<Response> => {
    const missing = await visibleAgent(c.env, c.get("principal"), c.req.param("agent")!).then(
      () => null,
      (err) => (err instanceof ApiError && err.code === "not_found" ? restNotFound(err.message) : Promise.reject(err)),
    );
    if (missing) return c.json(missing.body, missing.http);
    try {
      checkVersion(c.req.header(A2A_VERSION_HEADER));
      const params = Object.fromEntries(Object.entries(c.req.param()).map(([k, v]) => [k, v.replace(/:\w+$/, "")]));
      const result = await run(rpcCall(c, null, "rest"), { params, query: c.req.query(), body: () => jsonOf(c) });
      if (result instanceof Response) return result;
      return status === 204 ? c.body(null, 204) : c.json(result, status);
    } catch (err) {
      const e = a2aError(err);
      if (!e) throw toApiError(err);
      const { http, body } = restError(e.kind, e.message, e.data);
      return c.json(body, http as 400);
    }
  };
  a2aRest.on(
    methods.map((m) => m.toUpperCase()),
    honoPath(op.path),
    every(...guards(op, { readsBody: false })),
    handler,
  );
}

serve(ops.a2aRestSend, async (call, i) => sendMessage(call, await i.body(), false));
serve(ops.a2aRestStream, async (call, i) => sendMessage(call, await i.body(), true));
serve(ops.a2aRestListTasks, (call, i) => listTasks(call, typed(i.query)));
// The A2A SDKs subscribe with POST, the specification's table says GET: both are served.
serve(ops.a2aRestSubscribe, (call, i) => subscribeToTask(call, { id: i.params.id }), 200, ["get", "post"]);
serve(ops.a2aRestCancelTask, (call, i) => cancelTask(call, { id: i.params.id }));
serve(ops.a2aRestGetTask, (call, i) => getTask(call, { ...typed(i.query), id: i.params.id }));
serve(ops.a2aRestCreatePushConfig, async (call, i) => createPushConfig(call, { ...(await i.body()), taskId: i.params.id }), 201);
serve(ops.a2aRestListPushConfigs, (call, i) => listPushConfigs(call, { taskId: i.params.id }));
serve(ops.a2aRestGetPushConfig, (call, i) => getPushConfig(call, { taskId: i.params.id, id: i.params.configId }));
serve(ops.a2aRestExtendedCard, extendedCard);
serve(
  ops.a2aRestDeletePushConfig,
  async (call, i) => {
    await deletePushConfig(call, { taskId: i.params.id, id: i.params.configId });
  },
  204,
);
