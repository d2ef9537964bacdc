// Reaching a remote A2A agent (a2a-tool.ts): its JSON-RPC endpoint (the URL, or the interface its Agent Card
// names), one JSON-RPC call, and CancelTask with an outcome that says whether trying again could help: a turn's
// end cancels the remote task of a question it left waiting, and retries until the remote agent answers
// (session/remote-cancels).
import { A2A_VERSION, A2A_VERSION_HEADER, RPC_ERRORS, type Task } from "../../protocol/a2a";
import type { A2aAgentSpec } from "../../protocol/agent-config";
import { redactCredentials } from "../../protocol/redact";
import { urlAllowed } from "../url-allowlist";
import { readCapped } from "./http-io";
import { type ToolContext, ToolError } from "./types";

const CARD_SUFFIX = "/.well-known/agent-card.json";
const MAX_CARD_BYTES = 200_000;
/** How long a cancel waits for the remote agent's answer (and a cancelled call for the task's stream to end). */
export const CANCEL_GRACE_MS = 5000;

/** What reaching the remote agent needs of the call: a cancel after the turn's end has no more than this. */
export type Reach = Pick<ToolContext, "fetch" | "urlAllowlist" | "tool_call_id">;

/** The JSON-RPC endpoint: the URL itself, or the JSON-RPC interface its Agent Card names (also allowlisted). */
export async function endpoint(spec: A2aAgentSpec, ctx: Reach, signal: AbortSignal): Promise<string> {
  if (!spec.url.split("?")[0]!.endsWith(CARD_SUFFIX)) return spec.url;
  const res = await ctx.fetch(spec.url, { headers: spec.headers ?? {}, signal, redirect: "manual" });
  if (!res.ok) throw new ToolError(`The Agent Card of "${spec.name}" could not be read: HTTP ${res.status}`);
  let card: { supportedInterfaces?: { url?: string; protocolBinding?: string; protocolVersion?: string }[] };
  try {
    card = JSON.parse(await readCapped(res, MAX_CARD_BYTES));
  } catch {
    throw new ToolError(`The Agent Card of "${spec.name}" is not JSON`);
  }
  const rpc = card.supportedInterfaces?.find((i) => i.protocolBinding === "JSONRPC" && (i.protocolVersion ?? "").startsWith("1."));
  if (!rpc?.url) throw new ToolError(`The Agent Card of "${spec.name}" names no A2A 1.0 JSON-RPC interface`);
  if (!urlAllowed(rpc.url, ctx.urlAllowlist)) throw new ToolError(`The JSON-RPC URL of "${spec.name}" (${rpc.url}) is not allowlisted`);
  return rpc.url;
}

/** One JSON-RPC call to the remote agent. */
export function post(url: string, spec: A2aAgentSpec, ctx: Reach, method: string, params: unknown, signal: AbortSignal): Promise<Response> {
  return ctx.fetch(url, {
    method: "POST",
    headers: { ...spec.headers, "content-type": "application/json", accept: "text/event-stream, application/json", [A2A_VERSION_HEADER]: A2A_VERSION },
    body: JSON.stringify({ jsonrpc: "2.0", id: ctx.tool_call_id, method, params }),
    signal,
    redirect: "manual", // a redirect could leave the allowlist
  });
}

/** Text the remote agent sent, as a result or event may hold it: our headers' values (a reflected authorization) never. */
export const outside = (spec: A2aAgentSpec, text: string) => redactCredentials(text, Object.values(spec.headers ?? {}));

/**
 * What came of a CancelTask: `cancelled` (the task is cancelled), `ended` (TaskNotFound or TaskNotCancelable:
 * nothing is left to cancel), `retry` (the remote agent could not be reached or failed: it may answer later), or
 * `refused` (it answered in a way that trying again will not change: a 4xx, a redirect, the URL not allowlisted).
 */
export type CancelOutcome = { status: "cancelled" | "ended" } | { status: "retry" | "refused"; reason: string };

/** HTTP statuses that say "later": the remote agent is down, overloaded or restarting. */
const TRANSIENT_HTTP = new Set([408, 425, 429, 500, 502, 503, 504]);

/** CancelTask for the remote task `id` at `url` (an endpoint already resolved). */
export async function cancelTask(url: string, spec: A2aAgentSpec, ctx: Reach, id: string): Promise<CancelOutcome> {
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(), CANCEL_GRACE_MS);
  try {
    const res = await post(url, spec, ctx, "CancelTask", { id }, bound.signal);
    if (!res.ok) {
      await res.body?.cancel();
      return { status: TRANSIENT_HTTP.has(res.status) ? "retry" : "refused", reason: `HTTP ${res.status}` };
    }
    const body = JSON.parse(await readCapped(res, 1_000_000)) as { result?: Task; error?: { code?: number; message?: string } };
    if (body.result?.status.state === "TASK_STATE_CANCELED") return { status: "cancelled" };
    const code = body.error?.code;
    if (code === RPC_ERRORS.taskNotCancelable || code === RPC_ERRORS.taskNotFound) return { status: "ended" };
    if (body.error) {
      const reason = outside(spec, `the remote agent answered error ${code}: ${body.error.message ?? ""}`);
      return { status: code === RPC_ERRORS.internal ? "retry" : "refused", reason };
    }
    return { status: "retry", reason: `the remote task is ${body.result?.status.state ?? "in an unknown state"}` };
  } catch (err) {
    return { status: "retry", reason: bound.signal.aborted ? `no answer within ${CANCEL_GRACE_MS} ms` : `request failed: ${errorText(err)}` };
  } finally {
    clearTimeout(timer);
  }
}

/** CancelTask for a task of `spec`'s agent, its endpoint resolved first (a card that cannot be read: try later). */
export async function cancelRemoteTask(spec: A2aAgentSpec, ctx: Reach, id: string): Promise<CancelOutcome> {
  if (!urlAllowed(spec.url, ctx.urlAllowlist)) return { status: "refused", reason: `the URL of "${spec.name}" is not allowlisted` };
  let url: string;
  try {
    url = await endpoint(spec, ctx, AbortSignal.timeout(CANCEL_GRACE_MS));
  } catch (err) {
    // A network failure, or a card the remote agent cannot serve now, may pass; a card that is wrong will not.
    const http = /HTTP (\d+)/.exec(errorText(err))?.[1];
    const retry = !(err instanceof ToolError) || (http !== undefined && TRANSIENT_HTTP.has(Number(http)));
    return { status: retry ? "retry" : "refused", reason: errorText(err) };
  }
  return cancelTask(url, spec, ctx, id);
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
