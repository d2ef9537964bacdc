// Remote A2A agents as tools (`a2a_agents`, docs/guides/a2a.md): a call sends the model's message with
// SendStreamingMessage (A2A 1.0 JSON-RPC) and follows the remote task until it completes, fails, is cancelled
// or waits for input; its status updates become progress events, and the result is the task's state, answer
// and artifacts. Cancelling the turn (or the call's timeout) cancels the remote task (CancelTask). The message
// id and the context are derived from the call, so a call run again after a restart names the same message
// in the same context: a server that keeps message ids (this runtime does) answers the task it began then.
import { type Artifact, partsText, type StreamResponse, settled, type Task, type TaskState } from "../../protocol/a2a";
import type { A2aAgentSpec } from "../../protocol/agent-config";
import { sseEvents } from "../sse-read";
import { urlAllowed } from "../url-allowlist";
import { CANCEL_GRACE_MS, cancelRemoteTask, cancelTask, endpoint, outside, post, type Reach } from "./a2a-rpc";
import { readCapped } from "./http-io";
import { type ToolContext, type ToolDefinition, ToolError } from "./types";

/** What the call knows of the remote task so far. */
interface Seen {
  id: string | null;
  contextId: string | null;
  state: TaskState | null;
  statusText: string;
  artifacts: Artifact[];
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

/** What became of a remote task whose question went unanswered (a call's error result, a question.dropped's message). */
export function droppedMessage(name: string, status: keyof typeof UNANSWERED, id: string, outcome: keyof typeof OUTCOMES): string {
  return `The remote agent "${name}" asked a question and ${UNANSWERED[status]}: its task ${id} ${OUTCOMES[outcome]}`;
}

/** What became of the remote task, by CancelTask's outcome. */
const OUTCOMES = {
  cancelled: "was cancelled",
  ended: "had already ended",
  retry: "could not be cancelled yet: the cancel is retried",
  refused: "could not be cancelled and may still wait",
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
    // Nobody answered what the remote task asks in time, or the user declined: it would wait for ever, so it is
    // cancelled, once (a turn's end cancels it durably instead: session/remote-cancels).
    async unanswered(answerArgs, status, ctx) {
      const id = String(answerArgs.task_id);
      const { status: outcome } = await cancelRemoteTask(spec, ctx, id);
      throw new ToolError(droppedMessage(spec.name, status, id, outcome === "retry" ? "refused" : outcome));
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

/** CancelTask for a remote task the call gives up on (the turn was cancelled, the call timed out): did it go through. */
const cancelRemote = (url: string, spec: A2aAgentSpec, ctx: Reach, id: string) =>
  cancelTask(url, spec, ctx, id).then((o) => o.status === "cancelled" || o.status === "ended");
