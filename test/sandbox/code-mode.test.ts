// Code mode (docs/guides/code-mode.md): run_code scripts in Dynamic Workers whose inner tool calls are real
// tool calls of the turn, parented to the script's call, suspended durably on an approval and rerun from the
// start with earlier calls answered from the log.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, expectRefused, submitTurn, waitForEvent, waitForTurnEnd } from "../support/api";
import { scriptedSession } from "../support/code-tools";
import { toolRequests, toolURL, uniqueId } from "../support/fake-model";

const hook = (name = "hook") => ({
  name,
  description: "Records a note",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
});
const runCode = (code: string) => ({ tool_calls: [{ name: "run_code", arguments: { code } }] });
/** Webhook requests carrying `marker`. */
const hits = async (marker: string) => (await toolRequests()).filter((b) => JSON.stringify(b).includes(marker)).length;

async function codeSession(code: string, extra: Record<string, unknown> = {}) {
  return scriptedSession([], [runCode(code), { text: "done" }], { code_mode: true, http_tools: [hook()], ...extra });
}

describe("code mode", () => {
  it("declares the agent's tools to the model in TypeScript, only when the agent asks for code mode", async () => {
    const sid = await codeSession("return 1;");
    const { body } = await api("GET", `/v1/sessions/${sid}/tools`);
    const run = body.tools.find((t: any) => t.name === "run_code");
    expect(run.description).toContain("declare const tools: {");
    expect(run.description).toContain("hook(args: { note: string }): Promise<unknown>;");
    await expectRefused("PUT", "/v1/agents/bad-code-mode", "code_mode", { model: "demo:fast", code_mode: "yes" });
    // A tool of its own named run_code would be replaced by code mode's: refused, and nothing stored.
    const taken = /code mode's own tool/;
    await expectRefused(
      "PUT",
      "/v1/agents/run-code-taken",
      "http_tools.0.name",
      { model: "demo:fast", code_mode: true, http_tools: [hook("run_code")] },
      taken,
    );
    expect((await api("GET", "/v1/agents/run-code-taken")).status).toBe(404);
    expect((await api("PUT", "/v1/agents/run-code-free", { model: "demo:fast", http_tools: [hook("run_code")] })).status).toBe(201);
    const plain = await scriptedSession([], [{ text: "hi" }], { http_tools: [hook()] });
    expect((await api("GET", `/v1/sessions/${plain}/tools`)).body.tools.map((t: any) => t.name)).toEqual(["hook"]);
  });

  it("makes 5 inner calls as real tool calls parented to run_code, and returns the result with the console lines", async () => {
    const marker = uniqueId("five");
    const sid = await codeSession(
      `const out = [];
for (let i = 0; i < 5; i++) {
  const r = await tools.hook({ note: "${marker}-" + i });
  out.push(r.received.args?.note ?? r.received.note ?? null);
  console.log("call", i);
}
return { count: out.length };`,
    );
    const { turn_id } = await submitTurn(sid, "go");
    const log = (await waitForTurnEnd(sid, turn_id, 20_000)).filter((e) => e.turn_id === turn_id);
    expect(log.at(-1).type).toBe("turn.completed");
    const outer = log.find((e) => e.type === "tool.started" && e.payload.name === "run_code");
    const innerStarted = log.filter((e) => e.type === "tool.started" && e.payload.name === "hook");
    const innerResults = log.filter((e) => e.type === "tool.result" && e.payload.name === "hook");
    expect(innerStarted).toHaveLength(5);
    expect(innerResults).toHaveLength(5);
    expect([...innerStarted, ...innerResults].every((e) => e.parent_id === outer.tool_call_id)).toBe(true);
    expect(innerStarted.map((e) => e.payload.args.note)).toEqual([0, 1, 2, 3, 4].map((i) => `${marker}-${i}`));
    expect(await hits(marker)).toBe(5);
    const result = log.find((e) => e.type === "tool.result" && e.payload.name === "run_code");
    expect(result.payload.is_error).toBe(false);
    expect(result.payload.output).toEqual({ result: { count: 5 }, logs: ["call 0", "call 1", "call 2", "call 3", "call 4"] });
    expect(log.filter((e) => e.type === "runtime.error" || e.type === "runtime.warning")).toEqual([]);
    // The execution tree nests the inner calls under the script's.
    const tree = await api("GET", `/v1/sessions/${sid}/turns/${turn_id}/tree`);
    expect(tree.body.nodes.map((n: any) => [n.name, n.children.map((c: any) => c.name)])).toEqual([["run_code", ["hook", "hook", "hook", "hook", "hook"]]]);
    // So does the trace (OTLP export, the timeline): each inner call's span is a child of run_code's.
    for (const e of [...innerStarted, ...innerResults]) expect(e.parent_span_id).toBe(outer.span_id);
    expect(outer.parent_span_id).toBe(log.find((e) => e.type === "turn.submitted").span_id);
  });

  it("suspends on an inner call that needs approval; after a restart and the approval it reruns from the start, repeating no side effect", async () => {
    const marker = uniqueId("resume");
    const sid = await scriptedSession(
      [],
      [
        runCode(`const t0 = Date.now();
const r0 = Math.random();
const seen = [performance.now(), crypto.randomUUID(), crypto.getRandomValues(new Uint8Array(6)).join(".")].join("~");
await tools.hook({ note: "${marker}-a-" + t0 + "-" + r0 + "-" + seen });
await tools.hook({ note: "${marker}-b" });
await tools.deploy({ note: "${marker}-deploy" });
await tools.hook({ note: "${marker}-c" });
console.log("t0", t0);
return { t0, r0, seen };`),
        { text: "done" },
      ],
      { code_mode: true, http_tools: [hook(), hook("deploy")], hitl_tools: ["deploy"] },
    );
    const { turn_id } = await submitTurn(sid, "go");
    const required = await waitForEvent(sid, (e) => e.type === "action.required" && e.turn_id === turn_id);
    expect(required.payload).toMatchObject({ tool_name: "deploy", args: { note: `${marker}-deploy` } });
    expect(await hits(marker)).toBe(2);
    const thread = await api("GET", `/v1/sessions/${sid}/thread`);
    expect(thread.body).toMatchObject({ status: "waiting_permission", pending_actions: [{ action_id: required.action_id, tool_name: "deploy" }] });
    await abortAllDurableObjects();
    const ok = await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { decision: "approve" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const log = (await waitForTurnEnd(sid, turn_id, 20_000)).filter((e) => e.turn_id === turn_id);
    expect(log.at(-1).type).toBe("turn.completed");
    // Each side effect once: a, b, the approved deploy and c.
    for (const part of ["a-", 'b"', "deploy", 'c"']) expect(await hits(`${marker}-${part}`), part).toBe(1);
    const outer = log.find((e) => e.type === "tool.started" && e.payload.name === "run_code");
    const inner = log.filter((e) => e.type === "tool.result" && e.parent_id === outer.tool_call_id);
    expect(inner.map((e) => e.payload.name)).toEqual(["hook", "hook", "deploy", "hook"]);
    expect(inner[2].payload.metadata.approval_status).toBe("approved");
    const result = log.find((e) => e.type === "tool.result" && e.payload.name === "run_code");
    expect(result.payload.is_error).toBe(false);
    // The rerun saw the clock, random and crypto values of the first run (the first call's arguments, made before the restart, hold them).
    const { t0, r0, seen } = result.payload.output.result;
    expect(seen).toMatch(/^[\d.]+~[0-9a-f-]{36}~\d+(\.\d+){5}$/);
    const first = log.find((e) => e.type === "tool.started" && e.parent_id === outer.tool_call_id);
    expect(first.payload.args.note).toBe(`${marker}-a-${t0}-${r0}-${seen}`);
    const [perf, uuid, bytes] = seen.split("~");
    const hex = bytes
      .split(".")
      .map((b: string) => Number(b).toString(16).padStart(2, "0"))
      .join("");
    expect(result.payload.metadata.script).toEqual({ clock: [t0], random: [r0], perf: [Number(perf)], uuid: [uuid], bytes: [hex] });
    expect(result.payload.output.logs).toEqual([`t0 ${t0}`]);
  });

  it("asks the user from inside a script and gives the script the answer", async () => {
    const marker = uniqueId("ask");
    const sid = await codeSession(
      `const who = await tools.ask_user({ question: "Who?", response_schema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } });
await tools.hook({ note: "${marker}-" + who.name });
return who.name;`,
      { tools: ["ask_user"] },
    );
    const { turn_id } = await submitTurn(sid, "go");
    const asked = await waitForEvent(sid, (e) => e.type === "action.required" && e.turn_id === turn_id);
    expect(asked.payload).toMatchObject({ kind: "user_input", question: "Who?" });
    const answered = await api("POST", `/v1/sessions/${sid}/actions/${asked.action_id}`, { response: { name: "Ada" } });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const log = (await waitForTurnEnd(sid, turn_id, 20_000)).filter((e) => e.turn_id === turn_id);
    const result = log.find((e) => e.type === "tool.result" && e.payload.name === "run_code");
    expect(result.payload).toMatchObject({ is_error: false, output: { result: "Ada", logs: [] } });
    expect(await hits(`${marker}-Ada`)).toBe(1);
  });

  it("ends a rerun that makes other calls than the first run with a clear error, running none of them", async () => {
    const marker = uniqueId("diverge");
    // Only the first 1,000 values of a source are recorded: the 1,001st random number differs on the rerun.
    const code = `for (let i = 0; i < 1000; i++) Math.random();\nawait tools.deploy({ note: "${marker}-" + Math.random() }); return 1;`;
    const sid = await scriptedSession([], [runCode(code), { text: "done" }], {
      code_mode: true,
      http_tools: [hook("deploy")],
      hitl_tools: ["deploy"],
    });
    const { turn_id } = await submitTurn(sid, "go");
    const required = await waitForEvent(sid, (e) => e.type === "action.required" && e.turn_id === turn_id);
    expect((await api("POST", `/v1/sessions/${sid}/actions/${required.action_id}`, { decision: "approve" })).status).toBe(200);
    const log = (await waitForTurnEnd(sid, turn_id, 20_000)).filter((e) => e.turn_id === turn_id);
    const result = log.find((e) => e.type === "tool.result" && e.payload.name === "run_code");
    expect(result.payload.is_error).toBe(true);
    expect(result.payload.output.error).toMatch(
      /^The script made call 1 as deploy\(.*\) on its rerun, but deploy\(.*\) before: a script must make the same calls/,
    );
    expect(await hits(marker)).toBe(0);
    expect(log.at(-1).type).toBe("turn.completed");
  });

  it("names the script's line of an error it throws, and a replay answers its inner calls from the recording, with the recorded clock", async () => {
    const marker = uniqueId("replay");
    // The arguments hold the clock and a random number: the replay gives the script the recorded ones.
    const sid = await codeSession(
      `const a = await tools.hook({ note: "${marker}-" + Date.now() + "-" + Math.random() });\nif (!a) throw new Error("no");\nconsole.log("ok");\nreturn a.received !== undefined;`,
    );
    const { turn_id } = await submitTurn(sid, "go");
    await waitForTurnEnd(sid, turn_id, 20_000);
    expect(await hits(marker)).toBe(1);
    const replay = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {});
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    const log = await waitForTurnEnd(replay.body.exec_id, replay.body.turn_id, 20_000);
    const result = log.find((e) => e.type === "tool.result" && e.payload.name === "run_code");
    expect(result.payload).toMatchObject({ is_error: false, output: { result: true, logs: ["ok"] } });
    expect(log.filter((e) => e.type === "tool.result" && e.payload.name === "hook")).toHaveLength(1);
    expect(await hits(marker)).toBe(1);

    const thrower = await codeSession('const x = 1;\nthrow new RangeError("bad " + x);');
    const run = await submitTurn(thrower, "go");
    const thrown = (await waitForTurnEnd(thrower, run.turn_id, 20_000)).find((e) => e.type === "tool.result" && e.payload.name === "run_code");
    expect(thrown.payload.output.error).toMatch(/^The script failed: RangeError: bad 1 \(line 2, column \d+ of the script\)/);
  });
});
