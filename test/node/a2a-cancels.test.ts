// A cancel owed to a remote A2A task cannot be lost (docs/guides/a2a.md): the caller and the remote agent are two
// runtime processes, the caller reaching the remote through a proxy that counts the JSON-RPC methods it forwards
// (and drops the connection while the remote is down). A caller's turn that ends while the remote task waits on a
// question records the cancel with its end; the remote being down, the cancel is retried through the session's
// alarm, across a restart of the caller too, until it goes through once; an erased session drops what it owes;
// retries give up after A2A_CANCEL_MAX_ATTEMPTS; and a question asked by the tool of an agent handed over from is
// cancelled with that agent's config.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeOptions } from "../../bench/lib/miniflare.mjs";
import { verifyLog } from "../../src/engine/verify-log";
import type { Step } from "../support/fake-model";
import { bundledWithFakeModel, callRuntime, scriptedModel, until } from "./support/runtime-process";
import { freePort } from "./support/wrangler-dev";

const KEY = "a2a-cancels-key";
const setup = bundledWithFakeModel();

/** A proxy to the remote runtime that records the CancelTask requests it forwarded (by task id). */
function countingProxy(port: number, upstream: () => number): Promise<{ server: Server; cancels: string[]; refuse: { on: boolean } }> {
  const cancels: string[] = [];
  const refuse = { on: false };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (refuse.on) return void res.writeHead(503).end("unavailable");
      let rpc: { method?: string; params?: { id?: string } } = {};
      try {
        rpc = JSON.parse(body.toString() || "{}");
      } catch {}
      const up = request({ host: "127.0.0.1", port: upstream(), path: req.url, method: req.method, headers: req.headers }, (answer) => {
        if (rpc.method === "CancelTask") cancels.push(String(rpc.params?.id));
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on("error", () => res.destroy()); // the remote is down: the caller sees the connection fail
      up.end(body);
    });
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve({ server, cancels, refuse })));
}

const script = (steps: Step[]) => scriptedModel(setup.fakeBase, steps);

const call = (mf: Miniflare, method: string, path: string, body?: unknown) => callRuntime(mf, KEY, method, path, body);
const log = async (mf: Miniflare, sid: string): Promise<any[]> => (await call(mf, "GET", `/v1/sessions/${sid}/events?after=0&limit=1000`)).events;
const has = async (mf: Miniflare, sid: string, type: string) => (await log(mf, sid)).some((e) => e.type === type);

describe("cancels owed to remote A2A tasks", () => {
  const callerState = mkdtempSync(join(tmpdir(), "agent-runtime-a2a-caller-"));
  const remoteState = mkdtempSync(join(tmpdir(), "agent-runtime-a2a-remote-"));
  let callerPort: number;
  let remotePort: number;
  let proxyPort: number;
  let caller: Miniflare;
  let remote: Miniflare | null;
  let proxy: Awaited<ReturnType<typeof countingProxy>>;

  const start = async (state: string, port: number, bindings: Record<string, string> = {}): Promise<Miniflare> => {
    const base = {
      API_KEYS: KEY,
      OPENAI_COMPATIBLE_BASE_URL: setup.fakeBase,
      TOOL_URL_ALLOWLIST: `${setup.fakeBase}/,http://127.0.0.1:${proxyPort}/`,
      LOGS: "off",
      A2A_CANCEL_RETRY_BASE_MS: "500",
      A2A_CANCEL_MAX_ATTEMPTS: "12",
    };
    const mf = new Miniflare({ ...runtimeOptions(setup.bundle, state, { ...base, ...bindings }), host: "127.0.0.1", port });
    await mf.ready;
    return mf;
  };
  const stopRemote = async () => {
    await remote?.dispose();
    remote = null;
  };
  const startRemote = async () => {
    remote = await start(remoteState, remotePort);
  };

  beforeAll(async () => {
    [callerPort, remotePort, proxyPort] = [await freePort(), await freePort(), await freePort()];
    proxy = await countingProxy(proxyPort, () => remotePort);
    caller = await start(callerState, callerPort);
    await startRemote();
  }, 60_000);
  afterAll(async () => {
    await caller.dispose();
    await remote?.dispose();
    proxy.server.close();
    rmSync(callerState, { recursive: true, force: true });
    rmSync(remoteState, { recursive: true, force: true });
  });

  /**
   * A remote agent whose calculator asks its user first, and a caller session whose turn called it and now waits
   * on the remote task's question: the caller's session and the remote task's id.
   */
  async function waitingQuestion(name: string, steps?: Step[], config: Record<string, unknown> = {}): Promise<{ sid: string; task: string; asked: any }> {
    await call(remote!, "PUT", `/v1/agents/${name}`, { model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] });
    const model = await script(steps ?? [{ tool_calls: [{ name: "remote", arguments: { message: "what is 6 * 7?" } }] }, { text: "done" }]);
    const a2a_agents = [{ name: "remote", url: `http://127.0.0.1:${proxyPort}/a2a/${name}`, headers: { authorization: `Bearer ${KEY}` }, timeout_ms: 60_000 }];
    await call(caller, "PUT", `/v1/agents/caller-${name}`, { model, a2a_agents, ...config });
    const { session_id: sid } = await call(caller, "POST", "/v1/sessions", { agent: `caller-${name}` });
    await call(caller, "POST", `/v1/sessions/${sid}/turns`, { input: "ask the remote agent" });
    let asked: any;
    await until(async () => {
      asked = (await log(caller, sid)).find((e) => e.type === "action.required");
      return asked !== undefined;
    });
    const [task] = (await call(remote!, "GET", `/v1/sessions?agent=${name}`)).sessions.map((s: { session_id: string }) => s.session_id);
    return { sid, task, asked };
  }

  /** The caller's turn is cancelled while the remote is down: the first cancel fails and is kept. */
  async function cancelWhileDown(sid: string): Promise<string> {
    await stopRemote();
    await call(caller, "POST", `/v1/sessions/${sid}/interrupt`, { reason: "the user stopped it" });
    let dropped: any;
    await until(async () => {
      dropped = (await log(caller, sid)).find((e) => e.type === "question.dropped");
      return dropped !== undefined;
    });
    expect(dropped.payload).toMatchObject({ name: "remote", cancel: "retrying" });
    expect(dropped.payload.message).toMatch(/: its task task_\S+ could not be cancelled yet: the cancel is retried \(request failed/);
    return /its task (\S+)/.exec(dropped.payload.message)![1]!;
  }

  const remoteCancelled = async (task: string) => (await log(remote!, task)).find((e) => e.type === "turn.cancelled")?.payload.reason;

  it("retries the cancel until the remote agent is back, and records that it went through", async () => {
    const { sid, task } = await waitingQuestion("down-then-up");
    const taskId = await cancelWhileDown(sid);
    await startRemote();
    // Nothing asks the caller anything: its alarm sends the cancel again.
    await until(async () => (await remoteCancelled(task)) !== undefined, 30_000);
    expect(await remoteCancelled(task)).toBe("cancelled by the A2A client");
    await until(() => has(caller, sid, "question.cancel_settled"));
    const events = await log(caller, sid);
    expect(verifyLog(events)).toEqual([]);
    const settled = events.filter((e) => e.type === "question.cancel_settled");
    expect(settled).toHaveLength(1);
    expect(settled[0].payload).toMatchObject({ name: "remote", cancel: "cancelled", message: expect.stringMatching(/its task task_\S+ was cancelled$/) });
    expect(settled[0].payload.attempts).toBeGreaterThanOrEqual(2);
    expect(proxy.cancels.filter((id) => id === taskId)).toHaveLength(1);
  }, 60_000);

  it("sends a cancel the caller owed when it was killed, once, after its restart", async () => {
    const { sid, task } = await waitingQuestion("killed-caller");
    const taskId = await cancelWhileDown(sid);
    await caller.dispose(); // the caller dies owing the cancel
    await startRemote();
    caller = await start(callerState, callerPort);
    // No request reaches the caller's session: its alarm, kept with its storage, wakes it.
    await until(async () => (await remoteCancelled(task)) !== undefined, 30_000);
    await until(() => has(caller, sid, "question.cancel_settled"));
    await new Promise((r) => setTimeout(r, 2000)); // room for a second cancel, were one sent
    expect(proxy.cancels.filter((id) => id === taskId)).toHaveLength(1);
    const events = await log(caller, sid);
    expect(verifyLog(events)).toEqual([]);
    expect(events.filter((e) => e.type === "question.cancel_settled").map((e) => e.payload.cancel)).toEqual(["cancelled"]);
  }, 90_000);

  it("drops the cancels an erased session owed", async () => {
    const { sid, task } = await waitingQuestion("erased-caller");
    const taskId = await cancelWhileDown(sid);
    const erased = await caller.dispatchFetch(`http://runtime/v1/sessions/${sid}`, { method: "DELETE", headers: { authorization: `Bearer ${KEY}` } });
    expect(erased.status).toBe(204);
    await startRemote();
    await new Promise((r) => setTimeout(r, 4000)); // past the next retries the session would have made
    expect(proxy.cancels.filter((id) => id === taskId)).toEqual([]);
    expect((await call(remote!, "GET", `/v1/sessions/${task}`)).status).toBe("waiting_permission");
  }, 60_000);

  it("cancels the question of the agent handed over from, with that agent's A2A entry", async () => {
    await call(caller, "PUT", "/v1/agents/back", { model: "demo:fast" }); // no "remote" tool of its own
    const steps: Step[] = [
      {
        tool_calls: [
          { name: "remote", arguments: { message: "what is 6 * 7?" } },
          { name: "transfer_to_back", arguments: {} },
        ],
      },
      { text: "done" },
    ];
    const { sid, task } = await waitingQuestion("handed-over", steps, { handoffs: ["back"] });
    await until(async () => (await log(caller, sid)).some((e) => e.type === "run.status" && e.payload.phase === "handoff"));
    await call(caller, "POST", `/v1/sessions/${sid}/interrupt`, { reason: "the user stopped it" });
    await until(() => has(caller, sid, "question.dropped"));
    const dropped = (await log(caller, sid)).find((e) => e.type === "question.dropped");
    expect(dropped.payload).toMatchObject({ cancel: "cancelled", message: expect.stringMatching(/its task task_\S+ was cancelled$/) });
    expect(await remoteCancelled(task)).toBe("cancelled by the A2A client");
  }, 60_000);

  it("cancels the question of a sub-agent spawned before a handoff, with its parent's agent's A2A entry", async () => {
    await call(caller, "PUT", "/v1/agents/back", { model: "demo:fast" });
    const steps: Step[] = [
      {
        tool_calls: [
          { name: "run_subtask", arguments: { title: "ask", instructions: "ask the remote agent", tools: ["remote"] } },
          { name: "transfer_to_back", arguments: {} },
        ],
      },
      { tool_calls: [{ name: "remote", arguments: { message: "what is 6 * 7?" } }] },
      { text: "done" },
    ];
    const { sid, task, asked } = await waitingQuestion("sub-agent", steps, { handoffs: ["back"], tools: ["run_subtask"] });
    expect(asked.payload.tool_name).toBe("remote");
    await until(async () => (await log(caller, sid)).some((e) => e.type === "run.status" && e.payload.phase === "handoff"));
    await call(caller, "POST", `/v1/sessions/${sid}/interrupt`, { reason: "the user stopped it" });
    await until(() => has(caller, sid, "question.dropped"));
    const events = await log(caller, sid);
    expect(verifyLog(events)).toEqual([]);
    expect(events.find((e) => e.type === "question.dropped").payload).toMatchObject({ cancel: "cancelled" });
    expect(await remoteCancelled(task)).toBe("cancelled by the A2A client");
  }, 60_000);

  it("gives up after A2A_CANCEL_MAX_ATTEMPTS and says so", async () => {
    await caller.dispose();
    caller = await start(callerState, callerPort, { A2A_CANCEL_RETRY_BASE_MS: "200", A2A_CANCEL_MAX_ATTEMPTS: "3" });
    const { sid, task } = await waitingQuestion("never-back");
    proxy.refuse.on = true; // the remote agent answers 503 from now on
    try {
      await call(caller, "POST", `/v1/sessions/${sid}/interrupt`, { reason: "the user stopped it" });
      await until(() => has(caller, sid, "question.cancel_settled"), 30_000);
    } finally {
      proxy.refuse.on = false;
    }
    const events = await log(caller, sid);
    expect(events.find((e) => e.type === "question.dropped").payload).toMatchObject({ cancel: "retrying", message: expect.stringContaining("(HTTP 503)") });
    const settled = events.find((e) => e.type === "question.cancel_settled").payload;
    expect(settled).toMatchObject({ cancel: "abandoned", attempts: 3 });
    expect(settled.message).toMatch(/its task task_\S+ could not be cancelled and may still wait \(HTTP 503; 3 attempts\)$/);
    expect((await call(remote!, "GET", `/v1/sessions/${task}`)).status).toBe("waiting_permission");
  }, 60_000);
});
