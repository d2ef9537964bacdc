// A2A 1.0 (docs/guides/a2a.md): each registered agent's Agent Card, and its JSON-RPC endpoint. The methods
// are in a2a-tasks.ts; here the request is read as JSON-RPC (parse errors, invalid requests, unknown methods
// and versions are JSON-RPC errors, never a 5xx), and any failure becomes the error object of its code.
import type { Context } from "hono";
import { every } from "hono/combine";
import { ALL_CLASSES_POLICY, resolveToolbelt } from "../engine/tools/toolbelt";
import type { Env } from "../env";
import { agentConfig } from "../objects/registry/agent-cache";
import { A2A_VERSION, A2A_VERSION_HEADER, RpcError, type RpcId, RpcRequest } from "../protocol/a2a";
import type { AgentConfig } from "../protocol/agent-config";
import { ApiError } from "../protocol/errors";
import { a2a as ops } from "../protocol/operations";
import { own } from "../protocol/own-key";
import type { Principal } from "../protocol/permissions";
import { listTasks } from "./a2a-list";
import { createPushConfig, deletePushConfig, getPushConfig, listPushConfigs } from "./a2a-push";
import { cancelTask, getTask, type RpcCall, sendMessage, subscribeToTask } from "./a2a-tasks";
import { type AppEnv, router, toApiError } from "./http";
import { guards, route } from "./operation-route";

/** The agent a caller may talk to: a token bound to another agent does not see it (404, as for an unknown one). */
export async function visibleAgent(env: Env, principal: Principal, name: string): Promise<AgentConfig> {
  const config = principal.kind === "token" && principal.agent !== null && principal.agent !== name ? null : await agentConfig(env, name);
  if (!config) throw ApiError.notFound("Agent", name);
  return config;
}

/** The Agent Card: the JSON-RPC interface, the agent's tools as skills, bearer authentication. */
function agentCard(config: AgentConfig, origin: string) {
  const summary = (config.instructions.split("\n")[0] ?? "").slice(0, 300);
  const tools = [...resolveToolbelt(config, ALL_CLASSES_POLICY).values()];
  return {
    name: config.name,
    description: summary || `The agent "${config.name}" of an agent runtime`,
    version: "1.0.0",
    // One base for both bindings: JSON-RPC posts to it, HTTP+JSON adds its paths (a2a-rest.ts).
    supportedInterfaces: ["JSONRPC", "HTTP+JSON"].map((protocolBinding) => ({
      url: `${origin}/a2a/${config.name}`,
      protocolBinding,
      protocolVersion: A2A_VERSION,
    })),
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
    securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: "Bearer", description: "An API key or a browser token of the runtime" } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain", "application/json", "image/*", "application/pdf"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [
      {
        id: "converse",
        name: config.name,
        description: `A conversation with the agent; each task is one turn${summary ? `. ${summary}` : ""}`,
        tags: ["chat"],
      },
      ...tools.map((t) => ({ id: `tool:${t.name}`, name: t.name, description: t.description || t.name, tags: ["tool", t.permission_class] })),
    ],
  };
}

/** The version a request asks for: absent or 1.x is served; any other is VersionNotSupported. */
export function checkVersion(header: string | undefined): void {
  if (header === undefined || header.trim() === "") return;
  if (!/^1(\.\d+)*$/.test(header.trim()))
    throw new RpcError("versionNotSupported", `${A2A_VERSION_HEADER} ${header} is not served: this interface speaks ${A2A_VERSION}`);
}

type Method = (call: RpcCall, params: unknown) => Promise<unknown>;

/** The card says `extendedAgentCard: false`: the public card (which already takes a key) is the whole of it. */
export async function extendedCard(): Promise<never> {
  throw new RpcError("extendedCardNotConfigured", "this agent has no extended Agent Card: its card is all there is");
}

const METHODS: Record<string, Method> = {
  SendMessage: (call, p) => sendMessage(call, p, false),
  SendStreamingMessage: (call, p) => sendMessage(call, p, true),
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  SubscribeToTask: subscribeToTask,
  CreateTaskPushNotificationConfig: createPushConfig,
  GetTaskPushNotificationConfig: getPushConfig,
  ListTaskPushNotificationConfigs: listPushConfigs,
  // The name the 1.0 specification's method list gives beside the plural of its proto.
  ListTaskPushNotificationConfig: listPushConfigs,
  DeleteTaskPushNotificationConfig: deletePushConfig,
  GetExtendedAgentCard: extendedCard,
};

/** The A2A error of a failure (an internal one logged, and told only as such); null for the caller's own refusals (401, 403, 429), which stay HTTP statuses. */
export function a2aError(err: unknown): RpcError | null {
  if (err instanceof RpcError) return err;
  const api = toApiError(err);
  if (api.status === 401 || api.status === 403 || api.status === 429) return null;
  if (api.status === 500) {
    console.error("a2a: the method failed", err);
    return new RpcError("internal", "Internal error");
  }
  return new RpcError(api.code === "not_found" ? "taskNotFound" : api.code === "conflict" ? "unsupportedOperation" : "invalidParams", api.message, api.details);
}

/** The call of a request to the agent's methods; `binding` names the one whose stream framing it speaks. */
export function rpcCall(c: Context<AppEnv>, rpcId: RpcId, binding: RpcCall["binding"]): RpcCall {
  const { env } = c;
  return {
    env,
    principal: c.get("principal"),
    agent: c.req.param("agent")!,
    rpcId,
    lastEventId: c.req.header("last-event-id"),
    origin: new URL(c.req.url).origin,
    binding,
  };
}

async function handle(c: Context<AppEnv>): Promise<Response> {
  const agent = c.req.param("agent")!;
  const principal = c.get("principal");
  await visibleAgent(c.env, principal, agent);
  let id: RpcId = null;
  const answer = (body: Record<string, unknown>) => c.json({ jsonrpc: "2.0", id, ...body }, 200);
  try {
    const text = await c.req.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new RpcError("parse", "the body is not JSON");
    }
    const rawId = (body as { id?: unknown } | null)?.id;
    if (typeof rawId === "string" || typeof rawId === "number") id = rawId;
    const req = RpcRequest.safeParse(body);
    if (!req.success) throw new RpcError("invalidRequest", 'not a JSON-RPC 2.0 request: jsonrpc "2.0", a method and an id');
    checkVersion(c.req.header(A2A_VERSION_HEADER));
    // Own names only: "constructor" or "toString" are names every object answers to.
    const method = own(METHODS, req.data.method);
    if (!method) throw new RpcError("methodNotFound", `no method '${req.data.method}' (A2A 1.0: ${Object.keys(METHODS).join(", ")})`);
    const result = await method(rpcCall(c, id, "jsonrpc"), req.data.params);
    return result instanceof Response ? result : answer({ result });
  } catch (err) {
    const e = a2aError(err);
    if (!e) throw toApiError(err);
    return answer({ error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } });
  }
}

export const a2a = router();

a2a.openapi(route(ops.getAgentCard), async (c) => {
  const config = await visibleAgent(c.env, c.get("principal"), c.req.valid("param").agent);
  return c.json(agentCard(config, new URL(c.req.url).origin), 200);
});

// The body is read as JSON-RPC here (a malformed one is a JSON-RPC error, not a 400), so the route is a plain
// one; /openapi.json still has it.
const { middleware: _, ...documented } = route(ops.a2aRpc);
a2a.openAPIRegistry.registerPath(documented);
a2a.post("/a2a/:agent", every(...guards(ops.a2aRpc, { readsBody: false })), handle);
