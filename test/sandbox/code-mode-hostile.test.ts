// Hostile code-mode scripts (docs/guides/code-mode.md): each ends its run_code call with a clear error result (or
// finds nothing to take), and the session goes on working.
import { describe, expect, it } from "vitest";
import { submitTurn, waitForTurnEnd } from "../support/api";
import { scriptedSession } from "../support/code-tools";
import { baseURL } from "../support/fake-model";

const runCode = (code: string) => ({ tool_calls: [{ name: "run_code", arguments: { code } }] });

/** Runs each script as its own run_code step of one turn; their run_code results, in order. */
async function runScripts(scripts: string[]) {
  const sid = await scriptedSession([], [...scripts.map(runCode), { text: "still here" }], { code_mode: true });
  const { turn_id } = await submitTurn(sid, "go");
  const log = (await waitForTurnEnd(sid, turn_id, 30_000)).filter((e) => e.turn_id === turn_id);
  expect(log.at(-1)).toMatchObject({ type: "turn.completed", payload: { output: "still here" } });
  return { sid, results: log.filter((e) => e.type === "tool.result" && e.payload.name === "run_code").map((e) => e.payload) };
}

describe("hostile code-mode scripts", () => {
  it("reach no network, find no bindings, cannot throw oddities, return 100 MB or pollute prototypes", async () => {
    const { sid, results } = await runScripts([
      `return await fetch("http://127.0.0.1:9/");`,
      `return await fetch(${JSON.stringify(`${baseURL}/_tools/echo`)}, { method: "POST", body: "{}" });`,
      `const names = Object.getOwnPropertyNames(globalThis);
return { bindings: names.filter((n) => /^[A-Z][A-Z0-9_]+$/.test(n) && n !== "JSON"), env: typeof env, self: typeof self.SESSIONS };`,
      `throw { code: 7 };`,
      `throw Symbol("odd");`,
      `return "x".repeat(100 * 1024 * 1024);`,
      `Object.prototype.polluted = "yes"; return 1;`,
      `Array.prototype.map = () => "hijacked"; return [1, 2].map((x) => x * 2);`,
    ]);
    const [local, runtime, probe, object, symbol, huge, polluted, replaced] = results;
    for (const fetched of [local, runtime]) {
      expect(fetched.is_error).toBe(true);
      expect(fetched.output.error).toMatch(/^The script failed: Error: .*(not permitted|internet|network|outbound)/i);
    }
    expect(probe).toMatchObject({ is_error: false, output: { result: { bindings: [], env: "undefined", self: "undefined" } } });
    expect(object).toMatchObject({ is_error: true, output: { error: 'The script failed: the script threw a non-Error value (object): {"code":7}' } });
    expect(symbol).toMatchObject({ is_error: true, output: { error: "The script failed: the script threw a non-Error value (symbol): Symbol(odd)" } });
    expect(huge.is_error).toBe(true);
    expect(huge.output.error).toMatch(/more than the 1000000 a script may return/);
    expect(polluted.is_error).toBe(true);
    expect(polluted.output.error).toMatch(/^The script failed: TypeError: .*polluted/);
    // A script may change its own isolate's built-ins (each run has a fresh one): nothing outside sees it.
    expect(replaced).toMatchObject({ is_error: false, output: { result: "hijacked" } });
    // The session takes the next turn as usual.
    const next = await submitTurn(sid, "again");
    const log = await waitForTurnEnd(sid, next.turn_id, 15_000);
    expect(log.at(-1).type).toMatch(/^turn\./);
  });
});
