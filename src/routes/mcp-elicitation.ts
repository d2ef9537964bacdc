// ask_user over the runtime's MCP server: a question of a turn that run_agent_<name> follows becomes an MCP
// `elicitation/create` request to the calling client, when that client declared the elicitation capability.
//
// The server is stateless (any Worker instance serves any POST), so nothing is kept between requests:
// - the client's capability is carried by the Mcp-Session-Id handed out at initialize (the SDK client sends
//   it back on every request), and read from it on each tools/call;
// - the request goes out on the SSE stream of the tools/call that follows the turn, and its JSON-RPC id names
//   the session and the action, so the client's answer (a POST of its own, to whichever instance) is recorded
//   straight as the action's answer, like POST /v1/sessions/:sid/actions/:action_id, and the tools/call sees
//   the turn go on in the session's log.
import type { ClientCapabilities, JSONRPCMessage, JSONRPCNotification, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Env } from "../env";
import { randomId } from "../ids";
import { ApiError } from "../protocol/errors";
import type { EventOf, RuntimeEvent } from "../protocol/events";
import { own } from "../protocol/own-key";
import { allows, type Principal } from "../protocol/permissions";
import { callSession } from "./http";

const ELICITS = ".elicitation";
const ID_PREFIX = "elicitation:";
/** The one property a question whose answer is not an object is asked as (MCP forms are flat objects). */
const WRAPPED_ANSWER = "answer";

/** The Mcp-Session-Id for a client that declared `capabilities`: random, and marked when it can answer forms. */
export function mcpSessionId(capabilities: ClientCapabilities | undefined): string {
  const e = capabilities?.elicitation;
  // An empty elicitation capability means form mode (the spec's backwards compatibility); url-only does not.
  const forms = e !== undefined && (e.form !== undefined || e.url === undefined);
  return `${randomId("mcp")}${forms ? ELICITS : ""}`;
}

/** Whether the client of a request declared form elicitation (from the Mcp-Session-Id it sends). */
export function clientElicits(req: Request): boolean {
  return req.headers.get("mcp-session-id")?.endsWith(ELICITS) ?? false;
}

type Schema = Record<string, unknown>;
const ANNOTATIONS = ["title", "description", "default"];
const KEYWORDS: Record<string, string[]> = {
  string: ["type", "minLength", "maxLength", "format", "enum", ...ANNOTATIONS],
  number: ["type", "minimum", "maximum", ...ANNOTATIONS],
  integer: ["type", "minimum", "maximum", ...ANNOTATIONS],
  boolean: ["type", ...ANNOTATIONS],
  array: ["type", "items", "minItems", "maxItems", ...ANNOTATIONS],
};
const FORMATS = ["email", "uri", "date", "date-time"];

/** Whether `s` is a field an MCP form can ask exactly (no keyword it would drop, so the client asks what the schema checks). */
function isPrimitive(s: unknown): boolean {
  if (!s || typeof s !== "object" || Array.isArray(s)) return false;
  const schema = s as Schema;
  // Own entries only: a type named "constructor" is no keyword list.
  const type = String(schema.type);
  const allowed = own(KEYWORDS, type);
  if (!allowed || !Object.keys(schema).every((k) => allowed.includes(k))) return false;
  if (schema.format !== undefined && !FORMATS.includes(String(schema.format))) return false;
  if (schema.enum !== undefined && !(Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string"))) return false;
  if (schema.type !== "array") return true;
  // Arrays only as a multiple choice of strings.
  const items = schema.items as Schema | undefined;
  return !!items && items.type === "string" && Array.isArray(items.enum) && Object.keys(items).every((k) => k === "type" || k === "enum");
}

/**
 * The form an MCP client shows for a question's `response_schema`: the schema itself when it is a flat object
 * of primitive fields, a one-field object (`answer`) around a primitive one; null when a form cannot ask it.
 */
export function elicitationForm(responseSchema: Schema): { requestedSchema: Schema; wrapped: boolean } | null {
  if (isPrimitive(responseSchema)) {
    return { requestedSchema: { type: "object", properties: { [WRAPPED_ANSWER]: responseSchema }, required: [WRAPPED_ANSWER] }, wrapped: true };
  }
  const { type, properties, required, title, description, additionalProperties, ...rest } = responseSchema;
  if (type !== "object" || Object.keys(rest).length > 0 || !properties || typeof properties !== "object") return null;
  if (additionalProperties !== undefined && additionalProperties !== false) return null;
  if (!Object.values(properties).every(isPrimitive)) return null;
  const fields = { ...(title !== undefined ? { title } : {}), ...(description !== undefined ? { description } : {}) };
  return { requestedSchema: { type: "object", properties, ...(required !== undefined ? { required } : {}), ...fields }, wrapped: false };
}

/** The elicitation request for a question (an action.required of kind user_input), or null when a form cannot ask it. */
function elicitationRequest(sid: string, question: EventOf<"action.required">): JSONRPCRequest | null {
  const form = elicitationForm(question.payload.response_schema ?? { type: "string" });
  if (!form || !question.action_id) return null;
  const id = `${ID_PREFIX}${sid}:${question.action_id}:${form.wrapped ? "w" : "o"}`;
  return {
    jsonrpc: "2.0",
    id,
    method: "elicitation/create",
    params: { mode: "form", message: question.payload.question ?? "", requestedSchema: form.requestedSchema },
  };
}

/** Withdraws an elicitation request whose question was resolved otherwise. */
function elicitationCancelled(requestId: string | number, decision: string): JSONRPCNotification {
  return { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason: `The question was resolved elsewhere (${decision})` } };
}

/**
 * What a tools/call following a turn of session `sid` does with its events for a client that answers forms:
 * each question it can ask goes to the client through `send`; one resolved while the client's form is open
 * (answered through /v1, or its deadline passed) withdraws it. A question a form cannot ask, or whose request
 * cannot be sent, waits for an answer through /v1, as it does for a client without forms.
 */
export function askingClient(sid: string, send: (message: JSONRPCMessage) => Promise<void>): (event: RuntimeEvent) => Promise<void> {
  const asked = new Map<string, string | number>();
  return async (event) => {
    if (event.type === "action.required" && event.payload.kind === "user_input") {
      const request = elicitationRequest(sid, event);
      if (!request) return;
      await send(request).catch(() => {});
      asked.set(event.action_id!, request.id);
    }
    if (event.type !== "action.resolved") return;
    // A client that answered the question itself ignores the cancellation of a request it has completed.
    const requestId = asked.get(event.action_id!);
    if (requestId !== undefined) await send(elicitationCancelled(requestId, event.payload.decision)).catch(() => {});
  };
}

/** A response of the client to one of our elicitation requests. */
type Answer = { id: string; result?: { action?: string; content?: Record<string, unknown> }; error?: unknown };

function isAnswer(m: unknown): m is Answer {
  const r = m as Answer | null;
  return !!r && typeof r === "object" && typeof r.id === "string" && r.id.startsWith(ID_PREFIX) && ("result" in r || "error" in r);
}

/** The action body an elicitation result stands for: the (unwrapped) answer, or a decline. */
function decisionOf(result: NonNullable<Answer["result"]>, wrapped: boolean): Record<string, unknown> {
  if (result.action === "accept") return { response: wrapped ? result.content?.[WRAPPED_ANSWER] : (result.content ?? {}) };
  const reason = result.action === "decline" ? "Declined in the MCP client." : "Dismissed in the MCP client without an answer.";
  return { decision: "reject", reason };
}

/**
 * Records the answers among the messages of a POST (each checked like any answer to the action: a refusal is
 * the route's 4xx and records nothing) and returns the other messages, or null when there were only answers.
 * A client's error response (it could not ask) leaves the question waiting for an answer through /v1.
 */
export async function recordAnswers(env: Env, by: Principal, body: unknown): Promise<unknown> {
  const messages = Array.isArray(body) ? body : [body];
  const answers = messages.filter(isAnswer);
  if (answers.length === 0) return body;
  if (!allows(by, "session.approve")) throw new ApiError("forbidden", "this caller may not do session.approve");
  for (const answer of answers) {
    const [sid, action_id, shape] = answer.id.slice(ID_PREFIX.length).split(":");
    if (!sid || !action_id || !answer.result) continue;
    await callSession(env, sid, "resolveAction", { params: { action_id }, body: decisionOf(answer.result, shape === "w"), by: by.id });
  }
  const rest = messages.filter((m) => !isAnswer(m)) as JSONRPCMessage[];
  if (rest.length === 0) return null;
  return Array.isArray(body) ? rest : rest[0];
}
