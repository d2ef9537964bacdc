// Code tools called by turns (docs/guides/code-tools.md): each call runs in the tool's Dynamic Worker, with its
// declared secrets only, the network only to its declared hosts under the allowlist, and its limits.
import { describe, expect, it } from "vitest";
import { api } from "../support/api";
import { callSteps, registerCodeTool, runTurn, scriptedSession } from "../support/code-tools";
import { baseURL, toolRequests, uniqueId } from "../support/fake-model";

const HOST = new URL(baseURL).host;

describe("a code tool called by a turn", () => {
  it("returns its default export's result, with the call's ids and its secrets in ctx, and keeps a warm isolate per version", async () => {
    await registerCodeTool(
      "greet",
      `let calls = 0;
export default async ({ who }, ctx) => ({ hello: who, calls: ++calls, token: ctx.secrets.TOKEN, call: ctx.tool_call_id.length > 0 });`,
      { secrets: { TOKEN: "t-1" } },
    );
    const sid = await scriptedSession(
      ["greet"],
      callSteps([
        { name: "greet", args: { who: "ada" } },
        { name: "greet", args: { who: "bob" } },
      ]),
    );
    const { results, ended, log } = await runTurn(sid);
    expect(ended.type).toBe("turn.completed");
    // The turn's catalog says which version of the code tool it runs (the inspector shows it on the calls).
    const catalog = log.find((e) => e.type === "tool.catalog.resolved");
    expect(catalog?.payload.tools.find((t: any) => t.name === "greet")).toMatchObject({ code_tool: { version: expect.any(Number) } });
    expect(results.map((r) => r.payload.output)).toEqual([
      { hello: "ada", calls: 1, token: "t-1", call: true },
      // The same isolate served the second call.
      { hello: "bob", calls: 2, token: "t-1", call: true },
    ]);
    expect(results.every((r) => r.payload.is_error === false)).toBe(true);
  });

  it("reaches a declared host under the allowlist, and nothing else", async () => {
    // Marked, so requests of other files' tests at the same scripted server are not counted.
    const marker = uniqueId("poster");
    const fetcher = `export default async ({ url }) => { const r = await fetch(url, { method: "POST", body: JSON.stringify({ from: "${marker}" }) }); return r.json(); };`;
    await registerCodeTool("poster", fetcher, { allowed_hosts: [HOST] });
    const sid = await scriptedSession(
      ["poster"],
      callSteps([
        { name: "poster", args: { url: `${baseURL}/_tools/echo` } },
        { name: "poster", args: { url: "http://127.0.0.2:9/" } },
      ]),
    );
    const { results } = await runTurn(sid);
    expect(results[0].payload).toMatchObject({ is_error: false, output: { received: { from: marker } } });
    expect(results[1].payload.is_error).toBe(true);
    expect(results[1].payload.output).toMatch(/may not reach 127\.0\.0\.2:9: it is not in the tool's allowed_hosts/);
    expect((await toolRequests()).filter((b) => JSON.stringify(b).includes(marker))).toHaveLength(1);
  });

  it("ends a call that runs past timeout_ms, names the line of a thrown error, and spills a large result", async () => {
    await registerCodeTool("sleeper", "export default () => new Promise((r) => setTimeout(r, 60000));", { timeout_ms: 200 });
    await registerCodeTool("stuck", "export default () => new Promise(() => {});");
    await registerCodeTool("thrower", 'export default async () => {\n  const x = 1;\n  throw new RangeError("bad " + x);\n};');
    await registerCodeTool("big", "export default async () => 'x'.repeat(200000);");
    const sid = await scriptedSession(
      ["sleeper", "thrower", "big", "stuck"],
      callSteps([{ name: "sleeper" }, { name: "thrower" }, { name: "big" }, { name: "stuck" }]),
    );
    const { results, ended } = await runTurn(sid);
    expect(ended.type).toBe("turn.completed");
    expect(results[0].payload).toMatchObject({ is_error: true, output: 'Code tool "sleeper" timed out after 200 ms' });
    expect(results[1].payload).toMatchObject({
      is_error: true,
      output: expect.stringMatching(/RangeError: bad 1 \(line 3, column \d+ of the tool's source\)/),
    });
    expect(results[2].payload.is_error).toBe(false);
    expect(results[2].payload.output).toMatch(/\[truncated: 200000 bytes in all; the whole is artifact /);
    expect(results[3].payload).toMatchObject({ is_error: true, output: 'Code tool "stuck" never settled: it awaits something that can never happen' });
  });

  it("runs a deleted tool's agent without it, with a warning", async () => {
    await registerCodeTool("ephemeral", "export default async () => 1;");
    const sid = await scriptedSession(["ephemeral"], [{ text: "fine" }]);
    await api("DELETE", "/v1/code-tools/ephemeral");
    const { log, ended } = await runTurn(sid);
    expect(ended.type).toBe("turn.completed");
    expect(log.find((e) => e.type === "runtime.warning")?.payload).toMatchObject({ code: "code_tool_not_found" });
  });
});
