// Code mode under the turn's governance (docs/guides/code-mode.md): a restart in the middle of a script reruns it
// with the calls that returned answered from the log and the one under way lost; inner calls count against the
// turn's budget of tool calls; an agent's own limits of a run end a slow script, the call it left under way ending inside it.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, submitTurn, waitForEvent, waitForTurnEnd } from "../support/api";
import { scriptedSession } from "../support/code-tools";
import { toolRequests, toolURL, uniqueId } from "../support/fake-model";

const tool = (name: string, url: string) => ({ name, url, parameters: { type: "object", properties: { note: { type: "string" } }, required: ["note"] } });
const runCode = (code: string) => ({ tool_calls: [{ name: "run_code", arguments: { code } }] });
const hits = async (marker: string) => (await toolRequests()).filter((b) => JSON.stringify(b).includes(marker)).length;

describe("code mode and the turn's governance", () => {
  it("reruns a script a restart cut: the calls that returned are answered from the log, the one under way is lost", async () => {
    const marker = uniqueId("cut");
    const sid = await scriptedSession(
      [],
      [
        runCode(`await tools.hook({ note: "${marker}-a" });
try { await tools.slow({ note: "${marker}-slow" }); } catch (err) { console.log("slow:", err.message.includes("lost")); }
await tools.hook({ note: "${marker}-b" });
return "ok";`),
        { text: "done" },
      ],
      { code_mode: true, http_tools: [tool("hook", toolURL("echo")), tool("slow", toolURL("slow?ms=3000"))] },
    );
    const { turn_id } = await submitTurn(sid, "go");
    await waitForEvent(sid, (e) => e.type === "tool.started" && e.payload.name === "slow");
    await abortAllDurableObjects();
    const log = (await waitForTurnEnd(sid, turn_id, 20_000)).filter((e) => e.turn_id === turn_id);
    expect(log.at(-1).type).toBe("turn.completed");
    expect(log.some((e) => e.type === "run.status" && e.payload.phase === "recovering")).toBe(true);
    const result = log.find((e) => e.type === "tool.result" && e.payload.name === "run_code");
    expect(result.payload).toMatchObject({ is_error: false, output: { result: "ok", logs: ["slow: true"] } });
    expect(log.find((e) => e.type === "tool.result" && e.payload.name === "slow").payload.output).toMatchObject({ category: "lost" });
    expect([await hits(`${marker}-a`), await hits(`${marker}-slow`), await hits(`${marker}-b`)]).toEqual([1, 1, 1]);
  });

  it("counts inner calls against max_total_tool_calls: the turn ends budget_exceeded and no further call is made", async () => {
    const marker = uniqueId("budget");
    const sid = await scriptedSession([], [runCode(`for (let i = 0; i < 5; i++) await tools.hook({ note: "${marker}-" + i }); return 1;`), { text: "done" }], {
      code_mode: true,
      http_tools: [tool("hook", toolURL("echo"))],
      budget: { max_total_tool_calls: 3 },
    });
    const { turn_id } = await submitTurn(sid, "go");
    const log = (await waitForTurnEnd(sid, turn_id, 20_000)).filter((e) => e.turn_id === turn_id);
    expect(log.at(-1)).toMatchObject({ type: "turn.failed", payload: { error: { code: "budget_exceeded" } } });
    expect(log.find((e) => e.type === "budget.exceeded").payload).toMatchObject({ reason: "tool_calls", limit: 3 });
    expect(await hits(marker)).toBe(2);
  });

  it("takes an agent's own script limits: a run past its timeout_ms ends run_code with an error naming it, and bad limits are refused", async () => {
    const marker = uniqueId("limit");
    const sid = await scriptedSession(
      [],
      [runCode(`await tools.hook({ note: "${marker}-a" });\nawait tools.slow({ note: "${marker}-slow" });\nreturn "late";`), { text: "done" }],
      { code_mode: { timeout_ms: 1000 }, http_tools: [tool("hook", toolURL("echo")), tool("slow", toolURL("slow?ms=3000"))] },
    );
    const { turn_id } = await submitTurn(sid, "go");
    const log = (await waitForTurnEnd(sid, turn_id, 20_000)).filter((e) => e.turn_id === turn_id);
    expect(log.at(-1).type).toBe("turn.completed");
    const result = log.find((e) => e.type === "tool.result" && e.payload.name === "run_code");
    expect(result.payload.is_error).toBe(true);
    expect(JSON.stringify(result.payload.output)).toContain("timed out after 1000 ms");
    // Every call the script started has its result, before the script's own.
    const started = log.filter((e) => e.type === "tool.started").map((e) => e.tool_call_id);
    const ended = log.filter((e) => e.type === "tool.result").map((e) => e.tool_call_id);
    expect(ended.sort()).toEqual(started.sort());
    expect(log.findIndex((e) => e.type === "tool.result" && e.payload.name === "slow")).toBeLessThan(log.indexOf(result));

    for (const [code_mode, field] of [
      [{ timeout_ms: 10 }, "code_mode.timeout_ms"],
      [{ cpu_ms: 60_000 }, "code_mode.cpu_ms"],
      [{ wall: 1 }, "code_mode"],
    ] as const) {
      const res = await api("PUT", `/v1/agents/${uniqueId("limits")}`, { model: "demo:fast", code_mode });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(JSON.stringify(res.body.error.details), JSON.stringify(res.body)).toContain(field);
    }
  });
});
