// The A2A client tool (src/engine/tools/a2a-tool.ts) against a small A2A 1.0 agent served by a fetch function:
// what it sends (the version header, its headers, ids derived from the call), how it folds a stream into its
// result, input-required as the result, CancelTask when the turn is cancelled, the allowlist, and a reflected
// credential kept out of the error result.
import { describe, expect, it } from "vitest";
import { a2aTool } from "../../src/engine/tools/a2a-tool";
import type { McpProgress, ToolContext } from "../../src/engine/tools/types";
import { A2aAgentSchema } from "../../src/protocol/agent-config";

const URL_ = "http://remote.test/a2a/helper";
const spec = A2aAgentSchema.parse({ name: "helper", url: URL_, headers: { authorization: "Bearer remote-secret-value" } });
const task = { id: "task-1", contextId: "ctx-1" };

type Sent = { method: string; params: any; headers: Headers };

/** A remote agent: each SendStreamingMessage answered with `events` (then, if `hold`, kept open until a CancelTask). */
function remote(events: unknown[], { hold = false, status = 200, body }: { hold?: boolean; status?: number; body?: string } = {}) {
  const sent: Sent[] = [];
  let cancel: (() => void) | null = null;
  const fetch = async (_url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const rpc = JSON.parse(String(init!.body));
    sent.push({ method: rpc.method, params: rpc.params, headers: new Headers(init!.headers) });
    if (status !== 200) return new Response(body ?? "", { status });
    if (rpc.method === "CancelTask") {
      cancel?.();
      return Response.json({ jsonrpc: "2.0", id: rpc.id, result: { ...task, status: { state: "TASK_STATE_CANCELED" } } });
    }
    const frame = (result: unknown) => `data: ${JSON.stringify({ jsonrpc: "2.0", id: rpc.id, result })}\n\n`;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const enc = new TextEncoder();
        for (const e of events) controller.enqueue(enc.encode(frame(e)));
        const end = () => {
          controller.enqueue(enc.encode(frame({ statusUpdate: { ...task, taskId: task.id, status: { state: "TASK_STATE_CANCELED" } } })));
          controller.close();
        };
        if (hold) cancel = end;
        else controller.close();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  };
  return { sent, fetch: fetch as typeof globalThis.fetch };
}

function context(fetch: typeof globalThis.fetch, signal = new AbortController().signal, progress: McpProgress[] = []): ToolContext {
  return {
    session_id: "ses_1",
    turn_id: "trn_1",
    tool_call_id: "call_1",
    signal,
    fetch,
    now: () => 0,
    urlAllowlist: ["http://remote.test/"],
    progress: (p: McpProgress) => progress.push(p),
  } as unknown as ToolContext;
}

const status = (state: string, text?: string) => ({
  statusUpdate: {
    taskId: task.id,
    contextId: task.contextId,
    status: { state, ...(text ? { message: { role: "ROLE_AGENT", messageId: "m", parts: [{ text }] } } : {}) },
  },
});
const chunk = (text: string, append: boolean) => ({
  artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact: { artifactId: "a", parts: [{ text }] }, append, lastChunk: false },
});
const submitted = { task: { ...task, status: { state: "TASK_STATE_SUBMITTED" }, artifacts: [], history: [] } };

describe("the A2A tool", () => {
  it("streams the remote task to its end: the answer from its chunks, its updates as progress, ids derived from the call", async () => {
    const r = remote([submitted, status("TASK_STATE_WORKING"), chunk("The answer ", false), chunk("is 42.", true), status("TASK_STATE_COMPLETED")]);
    const progress: McpProgress[] = [];
    const out = (await a2aTool(spec).execute({ message: "what is 6 * 7?" }, context(r.fetch, undefined, progress))) as any;
    expect(out).toMatchObject({ task_id: "task-1", context_id: "ctx-1", state: "TASK_STATE_COMPLETED", answer: "The answer is 42." });
    expect(progress.map((p) => p.message)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    const [send] = r.sent;
    expect(send!.method).toBe("SendStreamingMessage");
    expect(send!.headers.get("a2a-version")).toBe("1.0");
    expect(send!.headers.get("authorization")).toBe("Bearer remote-secret-value");
    expect(send!.params.message).toMatchObject({
      messageId: "ses_1-call_1",
      contextId: "ses_1-call_1",
      role: "ROLE_USER",
      parts: [{ text: "what is 6 * 7?" }],
    });
    // Run again (after a restart), the call sends the same message in the same context.
    const again = remote([submitted, status("TASK_STATE_COMPLETED")]);
    await a2aTool(spec).execute({ message: "what is 6 * 7?" }, context(again.fetch));
    expect(again.sent[0]!.params.message).toEqual(send!.params.message);
  });

  it("answers a task waiting for input with what it asks and how to answer; task_id and context_id go with the next message", async () => {
    const r = remote([submitted, status("TASK_STATE_INPUT_REQUIRED", "Which colour?")]);
    const out = (await a2aTool(spec).execute({ message: "paint it" }, context(r.fetch))) as any;
    expect(out).toMatchObject({ state: "TASK_STATE_INPUT_REQUIRED", input_required: "Which colour?" });
    expect(out.how_to_answer).toContain("task-1");
    const next = remote([submitted, status("TASK_STATE_COMPLETED")]);
    await a2aTool(spec).execute({ message: "blue", task_id: "task-1", context_id: "ctx-1" }, context(next.fetch));
    expect(next.sent[0]!.params.message).toMatchObject({ taskId: "task-1", contextId: "ctx-1" });
  });

  it("makes the waiting task a question for the session's user; the loop's answer is a message of its own on that task", async () => {
    const tool = a2aTool(spec);
    const r = remote([submitted, status("TASK_STATE_INPUT_REQUIRED", "Which colour?")]);
    const out = await tool.execute({ message: "paint it" }, context(r.fetch));
    expect(tool.asks_user!(out)).toEqual({
      question: 'The remote agent "helper" asks: Which colour?',
      answer_args: { task_id: "task-1", context_id: "ctx-1" },
    });
    expect(tool.asks_user!(await tool.execute({ message: "hi" }, context(remote([submitted, status("TASK_STATE_COMPLETED")]).fetch)))).toBeNull();
    const next = remote([submitted, status("TASK_STATE_COMPLETED")]);
    await tool.execute({ message: "blue", task_id: "task-1", context_id: "ctx-1", answer_id: "act_1" }, context(next.fetch));
    expect(next.sent[0]!.params.message).toMatchObject({ messageId: "ses_1-call_1-act_1", taskId: "task-1", parts: [{ text: "blue" }] });
  });

  it("an answer sent again after a restart finds the task no longer waiting, and follows it instead", async () => {
    /** A remote whose task took the answer already: the message is refused; the task runs on, or ended. */
    const answeredRemote = (ended: boolean) => {
      const methods: string[] = [];
      const fetch = async (_url: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
        const rpc = JSON.parse(String(init!.body));
        methods.push(rpc.method);
        const error = (code: number) => Response.json({ jsonrpc: "2.0", id: rpc.id, error: { code, message: "not waiting" } });
        if (rpc.method === "SendStreamingMessage") return error(-32004);
        const done = { ...task, status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ artifactId: "a", parts: [{ text: "Blue it is." }] }], history: [] };
        if (rpc.method === "SubscribeToTask" && ended) return error(-32004);
        if (rpc.method === "GetTask") return Response.json({ jsonrpc: "2.0", id: rpc.id, result: done });
        const frames = [
          { task: { ...done, status: { state: "TASK_STATE_WORKING" }, artifacts: [] } },
          chunk("Blue it is.", false),
          status("TASK_STATE_COMPLETED"),
        ];
        const body = frames.map((result, i) => `id: ${i}\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: rpc.id, result })}\n\n`).join("");
        return new Response(body, { headers: { "content-type": "text/event-stream" } });
      };
      return { methods, fetch: fetch as typeof globalThis.fetch };
    };
    const answer = { message: "blue", task_id: "task-1", context_id: "ctx-1", answer_id: "act_1" };
    const running = answeredRemote(false);
    expect(await a2aTool(spec).execute(answer, context(running.fetch))).toMatchObject({ state: "TASK_STATE_COMPLETED", answer: "Blue it is." });
    expect(running.methods).toEqual(["SendStreamingMessage", "SubscribeToTask"]);
    const ended = answeredRemote(true);
    expect(await a2aTool(spec).execute(answer, context(ended.fetch))).toMatchObject({ state: "TASK_STATE_COMPLETED", answer: "Blue it is." });
    expect(ended.methods).toEqual(["SendStreamingMessage", "SubscribeToTask", "GetTask"]);
    // A message of the model's own (no answer_id) on a task that is not waiting stays an error.
    const own = answeredRemote(false);
    await expect(a2aTool(spec).execute({ message: "blue", task_id: "task-1" }, context(own.fetch))).rejects.toThrow(/-32004/);
  });

  it("cancels the remote task when the turn is cancelled, and reads its stream to the end", async () => {
    const r = remote([submitted, status("TASK_STATE_WORKING")], { hold: true });
    const abort = new AbortController();
    const running = a2aTool(spec).execute({ message: "slowly" }, context(r.fetch, abort.signal));
    while (r.sent.length === 0) await new Promise((ok) => setTimeout(ok, 5));
    await new Promise((ok) => setTimeout(ok, 20));
    abort.abort(new Error("interrupted"));
    await expect(running).rejects.toThrow(/cancelled/);
    expect(r.sent.map((s) => s.method)).toEqual(["SendStreamingMessage", "CancelTask"]);
    expect(r.sent[1]!.params).toEqual({ id: "task-1" });
  });

  it("refuses a URL off the allowlist without a request, and keeps a reflected credential out of its error", async () => {
    const r = remote([]);
    const off = a2aTool({ ...spec, url: "http://elsewhere.test/a2a" });
    await expect(off.execute({ message: "hi" }, context(r.fetch))).rejects.toThrow(/not allowlisted/);
    expect(r.sent).toEqual([]);
    const reflecting = remote([], { status: 500, body: "bad request from Bearer remote-secret-value" });
    const err = await a2aTool(spec)
      .execute({ message: "hi" }, context(reflecting.fetch))
      .catch((e: Error) => e);
    expect(String((err as Error).message)).toContain("HTTP 500");
    expect(String((err as Error).message)).not.toContain("remote-secret-value");
  });
});
