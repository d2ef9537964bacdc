// Helpers for code tool tests: register a tool, script a model that calls tools, and run a turn.
import { expect } from "vitest";
import { api, createSession, submitTurn, waitForTurnEnd } from "./api";
import { type Step, script, uniqueId } from "./fake-model";

/** Registers code tool `name` with `source` (and any other field); fails the test on a refusal. */
export async function registerCodeTool(name: string, source: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await api("PUT", `/v1/code-tools/${name}`, { source, input_schema: { type: "object" }, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
}

/** Steps that call each tool of `calls` in turn (one model step each), then answer `answer`. */
export function callSteps(calls: { name: string; args?: unknown }[], answer = "done"): Step[] {
  return [...calls.map((c) => ({ tool_calls: [{ name: c.name, arguments: c.args ?? {} }] })), { text: answer }];
}

/** A session of an agent with `tools` (and any other field) whose model follows `steps` across its turns. */
export async function scriptedSession(tools: string[], steps: Step[], extra: Record<string, unknown> = {}): Promise<string> {
  const scriptId = uniqueId("code-tool");
  await script(scriptId, steps);
  return createSession({ name: "coder", model: `openai-compatible:${scriptId}`, tools, ...extra });
}

/** Runs one turn to its end: its events, its tool.result events and its terminal event. */
export async function runTurn(sid: string, input = "go") {
  const { turn_id } = await submitTurn(sid, input);
  const log = (await waitForTurnEnd(sid, turn_id, 15_000)).filter((e) => e.turn_id === turn_id);
  return { turn_id, log, results: log.filter((e) => e.type === "tool.result"), ended: log.at(-1) };
}
