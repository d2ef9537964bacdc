// Remote A2A agents as tools (`a2a_agents`, docs/guides/a2a.md): a call sends the model's message with
// SendStreamingMessage (A2A 1.0 JSON-RPC) and follows the remote task until it completes, fails, is cancelled
// or waits for input; its status updates become progress events, and the result is the task's state, answer
// and artifacts. Cancelling the turn (or the call's timeout) cancels the remote task (CancelTask). The message
// id and the context are derived from the call, so a call run again after a restart names the same message
// in the same context: a server that keeps message ids (this runtime does) answers the task it began then.
import { A2A_VERSION, A2A_VERSION_HEADER, type Artifact, partsText, type StreamResponse, settled, type Task, type TaskState } from "../../protocol/a2a";
import type { A2aAgentSpec } from "../../protocol/agent-config";
import { redactCredentials } from "../../protocol/redact";
import { sseEvents } from "../sse-read";
import { urlAllowed } from "../url-allowlist";
import { readCapped } from "./http-io";
import { type ToolContext, type ToolDefinition, ToolError } from "./types";

const CARD_SUFFIX = "/.well-known/agent-card.json";
const MAX_CARD_BYTES = 200_000;
/** How long a cancelled call waits for the remote task's stream to end before it cuts the connection. */
const CANCEL_GRACE_MS = 5000;

/** What the call knows of the remote task so far. */
interface Seen {
  id: string | null;
  contextId: string | null;
  state: TaskState | null;
  statusText: string;
  artifacts: Artifact[];
}

/** What reaching the remote agent needs of the call: a cancel after the turn's end has no more than this. */
type Reach = Pick<ToolContext, "fetch" | "urlAllowlist" | "tool_call_id">;

/** The JSON-RPC endpoint: the URL itself, or the JSON-RPC interface its Agent Card names (also allowlisted). */
async function endpoint(spec: A2aAgentSpec, ctx: Reach, signal: AbortSignal): Promise<string> {
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
function post(url: string, spec: A2aAgentSpec, ctx: Reach, method: string, params: unknown, signal: AbortSignal): Promise<Response> {
  return ctx.fetch(url, {
    method: "POST",
    headers: { ...spec.headers, "content-type": "application/json", accept: "text/event-stream, application/json", [A2A_VERSION_HEADER]: A2A_VERSION },
    body: JSON.stringify({ jsonrpc: "2.0", id: ctx.tool_call_id, method, params }),
    signal,
    redirect: "manual", // a redirect could leave the allowlist
  });
}

/** Folds one result (a Task, or a stream event) into what the call knows. */
function see(seen: Seen, result: StreamResponse | Task): void {
  const task = "status" in result ? result : "task" in result ? result.task : null;
  if (task) Object.assign(seen, { id: task.id, contextId: task.contextId, artifacts: task.artifacts ?? [] });
  const status = task?.status ?? ("statusUpdate" in result ? result.statusUpdate.status : undefined);
  if (status) Object.assign(seen, { state: status.state, statusText: status.message ? partsText(status.message.parts) : "" });
  if ("artifactUpdate" in result) {
    const { artifact, append } = result.artifactUpdate;
    const prior = seen.artifacts.find((a) => a.artifactId === artifact.artifactId);
    if (prior && append) appendParts(prior, artifact.parts);
    else if (prior) prior.parts = artifact.parts;
    else seen.artifacts.push(structuredClone(artifact));
  }
  if ("message" in result) Object.assign(seen, { state: "TASK_STATE_COMPLETED", statusText: partsText(result.message.parts) });
}

/** Appended chunks: text continues the last text part, anything else is a part of its own. */
function appendParts(artifact: Artifact, parts: Artifact["parts"]): void {
  for (const p of parts) {
    const last = artifact.parts.at(-1);
    if (last?.text !== undefined && p.text !== undefined) last.text += p.text;
    else artifact.parts.push(p);
  }
}

/** Text the remote agent sent, as the result may hold it: our headers' values (a reflected authorization) never. */
const outside = (spec: A2aAgentSpec, text: string) => redactCredentials(text, Object.values(spec.headers ?? {}));

/** A JSON-RPC error the remote agent answered, with its code. */
class RemoteRpcError extends ToolError {
  constructor(
    message: string,
    readonly code: number | undefined,
  ) {
    super(message);
  }
}

const rpcFailure = (spec: A2aAgentSpec, error: { code?: number; message?: string }) =>
  new RemoteRpcError(outside(spec, `The remote agent answered error ${error.code}: ${error.message}`), error.code);

/** The remote's "task not cancelable": it ended already. */
const TASK_NOT_CANCELABLE = -32002;
/** The remote's "unsupported operation": a message on a task that no longer waits, a subscription to an ended one. */
const NOT_WAITING = -32004;

/**
 * Sends the message and follows its task. An answer sent again (a restart cut the call after it went out) finds
 * the task no longer waiting: the call follows the task instead (SubscribeToTask, or GetTask once it ended).
 */
async function send(
  url: string,
  spec: A2aAgentSpec,
  ctx: ToolContext,
  message: { taskId?: string },
  answer: boolean,
  seen: Seen,
  signal: AbortSignal,
  known: () => void,
): Promise<void> {
  const run = (method: string, params: unknown) => post(url, spec, ctx, method, params, signal).then((res) => follow(res, seen, spec, ctx, known));
  const notWaiting = (err: unknown) => err instanceof RemoteRpcError && err.code === NOT_WAITING;
  try {
    return await run("SendStreamingMessage", { message });
  } catch (err) {
    if (!answer || !message.taskId || !notWaiting(err)) throw err;
  }
  try {
    return await run("SubscribeToTask", { id: message.taskId });
  } catch (err) {
    if (!notWaiting(err)) throw err;
  }
  return run("GetTask", { id: message.taskId });
}

/** Reads the answer to SendStreamingMessage: an SSE stream of JSON-RPC responses, or one JSON-RPC response. */
async function follow(res: Response, seen: Seen, spec: A2aAgentSpec, ctx: ToolContext, known: () => void): Promise<void> {
  if (res.status >= 300 && res.status < 400) throw new ToolError(`HTTP ${res.status}: redirects are not followed`);
  if (!res.ok) throw new ToolError(outside(spec, `HTTP ${res.status}: ${await readCapped(res, 2000)}`));
  if (!(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    const body = JSON.parse(await readCapped(res, 1_000_000)) as { result?: StreamResponse; error?: { code?: number; message?: string } };
    if (body.error || !body.result) throw rpcFailure(spec, body.error ?? {});
    return see(seen, body.result);
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let updates = 0;
  try {
    for await (const e of sseEvents(reader)) {
      const body = JSON.parse(e.data) as { result?: StreamResponse; error?: { code?: number; message?: string } };
      if (body.error || !body.result) throw rpcFailure(spec, body.error ?? {});
      const first = seen.id === null;
      see(seen, body.result);
      // Cancelled before the task's id was known: now it can be cancelled.
      if (first && seen.id !== null && ctx.signal.aborted) known();
      if ("statusUpdate" in body.result || "task" in body.result) {
        ctx.progress?.({
          server: spec.name,
          tool: "a2a",
          progress: ++updates,
          total: null,
          message: `${seen.state}${seen.statusText ? `: ${seen.statusText}` : ""}`,
        });
      }
      if (seen.state && settled(seen.state)) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The tool's result: the task's ids, state and answer; waiting for input, what it asks and how to answer. */
function result(spec: A2aAgentSpec, seen: Seen): Record<string, unknown> {
  const answer = seen.artifacts.map((a) => partsText(a.parts)).join("\n\n");
  const out = {
    agent: spec.name,
    task_id: seen.id,
    context_id: seen.contextId,
    state: seen.state,
    answer: answer || seen.statusText,
    artifacts: seen.artifacts,
  };
  if (seen.state === "TASK_STATE_INPUT_REQUIRED") {
    return { ...out, input_required: seen.statusText, how_to_answer: `call ${spec.name} again with task_id "${seen.id}" and the answer as message` };
  }
  if (seen.state === "TASK_STATE_FAILED" || seen.state === "TASK_STATE_REJECTED") throw new ToolError(`The remote task ${seen.state}: ${seen.statusText}`);
  return out;
}

/** Why the question went unanswered, by status. */
const UNANSWERED = {
  timed_out: "nobody answered it before its deadline",
  rejected: "the user declined to answer it",
  cancelled: "the turn was cancelled before it was answered",
  interrupted: "the turn ended before it was answered",
} as const;

export function a2aTool(spec: A2aAgentSpec): ToolDefinition {
  return {
    name: spec.name,
    description:
      spec.description ||
      `Sends a message to the remote agent "${spec.name}" (A2A) and returns its answer. Pass context_id from an earlier result to continue that conversation, and task_id to answer a task that waits for input.`,
    parameters: {
      type: "object",
      properties: {
        message: { type: "string", description: "What to tell or ask the remote agent" },
        context_id: { type: "string", description: "Continue the remote conversation of an earlier result's context_id" },
        task_id: { type: "string", description: "Answer the remote task of an earlier result that waits for input" },
      },
      required: ["message"],
    },
    permission_class: spec.permission_class,
    parallel_safe: true,
    // Run again after a restart: the same message id in the same context finds the task it began.
    idempotent: true,
    // A remote task waiting for input asks this session's user; the answer goes to the task as its next message.
    asks_user(output) {
      const r = output as { state?: unknown; input_required?: unknown; task_id?: unknown; context_id?: unknown } | null;
      if (r?.state !== "TASK_STATE_INPUT_REQUIRED" || typeof r.task_id !== "string") return null;
      const answer_args = { task_id: r.task_id, ...(typeof r.context_id === "string" ? { context_id: r.context_id } : {}) };
      return { question: `The remote agent "${spec.name}" asks: ${String(r.input_required ?? "")}`, answer_args };
    },
    // Nobody answered what the remote task asks, or the turn ended first: it would wait for ever, so it is cancelled.
    async unanswered(answerArgs, status, ctx) {
      const id = String(answerArgs.task_id);
      const why = UNANSWERED[status];
      const bound = AbortSignal.timeout(CANCEL_GRACE_MS);
      const url = urlAllowed(spec.url, ctx.urlAllowlist) ? await endpoint(spec, ctx, bound).catch(() => null) : null;
      const cancelled = url !== null && (await cancelRemote(url, spec, ctx, id));
      const outcome = cancelled ? `its task ${id} was cancelled` : `its task ${id} could not be cancelled and may still wait`;
      throw new ToolError(`The remote agent "${spec.name}" asked a question and ${why}: ${outcome}`);
    },
    async execute(args, ctx) {
      if (!urlAllowed(spec.url, ctx.urlAllowlist)) throw new ToolError(`URL of tool "${spec.name}" is not allowlisted`);
      const text = typeof args.message === "string" ? args.message : JSON.stringify(args.message ?? "");
      const contextId = typeof args.context_id === "string" ? args.context_id : `${ctx.session_id}-${ctx.tool_call_id}`;
      // An answer the loop sends (asks_user) is a message of its own, named by the question it answers.
      const answered = typeof args.answer_id === "string" ? `-${args.answer_id}` : "";
      const message = {
        messageId: `${ctx.session_id}-${ctx.tool_call_id}${answered}`,
        role: "ROLE_USER",
        parts: [{ text }],
        contextId,
        ...(typeof args.task_id === "string" ? { taskId: args.task_id } : {}),
      };
      const seen: Seen = { id: null, contextId: null, state: null, statusText: "", artifacts: [] };
      const stop = new AbortController();
      let url = spec.url;
      let timedOut = false;
      // Giving up cancels the remote task and reads its stream to the end (CANCELED) rather than cutting the
      // connection; a remote agent that does not end it within a grace period is cut.
      let cancelling: Promise<void> | null = null;
      const giveUp = () => {
        if (cancelling || stop.signal.aborted) return;
        const cut = () => setTimeout(() => stop.abort(new Error("gave up")), CANCEL_GRACE_MS);
        // Before the task's id is known there is nothing to cancel yet: its first event calls this again.
        if (!seen.id) return void cut();
        cancelling = cancelRemote(url, spec, ctx, seen.id).then(() => void cut());
      };
      const timer = setTimeout(() => {
        timedOut = true;
        giveUp();
      }, spec.timeout_ms);
      ctx.signal.addEventListener("abort", giveUp, { once: true });
      try {
        url = await endpoint(spec, ctx, stop.signal);
        await send(url, spec, ctx, message, answered !== "", seen, stop.signal, giveUp);
      } catch (err) {
        if (!timedOut && !ctx.signal.aborted) throw err;
      } finally {
        clearTimeout(timer);
        ctx.signal.removeEventListener("abort", giveUp);
      }
      if (timedOut) throw new ToolError(`The remote agent "${spec.name}" did not finish within ${spec.timeout_ms} ms; its task was cancelled`);
      if (ctx.signal.aborted) throw new ToolError("The call was cancelled, and the remote task with it");
      if (!seen.state || !settled(seen.state)) throw new ToolError(`The stream of "${spec.name}" ended with the task ${seen.state ?? "unknown"}`);
      return result(spec, seen);
    },
  };
}

/**
 * CancelTask for a remote task the call gives up on (the turn was cancelled, the call timed out, or its question
 * went unanswered); best effort: whether the remote agent answered the task cancelled (or already ended).
 */
async function cancelRemote(url: string, spec: A2aAgentSpec, ctx: Reach, id: string): Promise<boolean> {
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(), CANCEL_GRACE_MS);
  try {
    const res = await post(url, spec, ctx, "CancelTask", { id }, bound.signal);
    if (!res.ok) {
      await res.body?.cancel();
      return false;
    }
    const body = JSON.parse(await readCapped(res, 1_000_000)) as { result?: Task; error?: { code?: number } };
    return body.result?.status.state === "TASK_STATE_CANCELED" || body.error?.code === TASK_NOT_CANCELABLE;
  } catch {
    // The remote task may run on; the error result says the call was given up.
    return false;
  } finally {
    clearTimeout(timer);
  }
}
