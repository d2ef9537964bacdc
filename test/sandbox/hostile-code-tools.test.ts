// Hostile code tools (docs/guides/code-tools.md): scripts that try to reach the network, the runtime's bindings
// or its prototypes, never settle, return too much or throw what is not an Error each end with a clear error
// in their tool.result, and the session and the runtime go on working (the next turn succeeds).
//
// A synchronous endless loop and unbounded allocation are stopped by the platform's limits (cpu_ms, 128 MB per
// isolate) on Cloudflare; workerd run locally enforces neither (such a script wedges or ends the whole local
// process), so they are not run here: see the guide's "Limits".
import { describe, expect, it } from "vitest";
import { api, expectOk } from "../support/api";
import { callSteps, registerCodeTool, runTurn, scriptedSession } from "../support/code-tools";
import { baseURL } from "../support/fake-model";

const FAKE = new URL(baseURL);
const fetchSource = (url: string) => `export default async () => { const r = await fetch(${JSON.stringify(url)}); return await r.text(); };`;

/** name: [source, registration extras, what its tool.result must say]. */
const HOSTILE: Record<string, [string, Record<string, unknown>, RegExp]> = {
  // No allowed_hosts: no network at all, loopback included.
  loopback: [fetchSource(`${baseURL}/_tools/requests`), {}, /Code tool "loopback" failed: .*(not permitted|disallowed|network)/i],
  // The runtime's own URL, declared or not: not under the allowlist.
  own_url: [fetchSource("https://runtime.test/v1/agents"), {}, /Code tool "own_url" failed: .*(not permitted|disallowed|network)/i],
  own_url_declared: [
    fetchSource("https://runtime.test/v1/agents"),
    { allowed_hosts: ["runtime.test"] },
    /may not reach https:\/\/runtime\.test\/v1\/agents: it is not under the deployment's TOOL_URL_ALLOWLIST/,
  ],
  // An allowlisted host the tool did not declare.
  undeclared: [
    fetchSource(`${baseURL}/_tools/requests`),
    { allowed_hosts: ["api.example.com"] },
    new RegExp(`may not reach ${FAKE.host.replace(/\./g, "\\.")}: it is not in the tool's allowed_hosts`),
  ],
  socket: [
    `import { connect } from "cloudflare:sockets";\nexport default async () => { const s = connect({ hostname: "127.0.0.1", port: ${FAKE.port} }); await s.opened; return "connected"; };`,
    {},
    /Code tool "socket" failed: /,
  ],
  forever: [
    "export default async () => { for (;;) await new Promise((r) => setTimeout(r, 5)); };",
    { timeout_ms: 300 },
    /^Code tool "forever" timed out after 300 ms$/,
  ],
  hundred_mb: [
    "export default async () => 'x'.repeat(100_000_000);",
    {},
    /the result is 100000000 characters long, more than the 1000000 a code tool may return/,
  ],
  hundred_mb_json: ["export default async () => ({ big: 'x'.repeat(100_000_000) });", {}, /the result is 1000000\d+ characters long/],
  throws_string: ["export default async () => { throw 'plain text'; };", {}, /the tool threw a non-Error value \(string\): "plain text"/],
  throws_null: ["export default async () => { throw null; };", {}, /the tool threw a non-Error value \(null\): null/],
  throws_object: ["export default async () => { throw { code: 7 }; };", {}, /the tool threw a non-Error value \(object\): \{"code":7\}/],
  throws_undefined: ["export default async () => { throw undefined; };", {}, /the tool threw a non-Error value \(undefined\)$/],
  throws_trap: [
    "export default async () => { throw new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } }); };",
    {},
    /the tool threw (a non-Error value|a value that could not be described)/,
  ],
  pollutes: [
    "export default async () => { Object.prototype.polluted = true; return 'polluted'; };",
    {},
    /TypeError: .*polluted.*\(line 1, column \d+ of the tool's source\)/,
  ],
  pollutes_proto: ["export default async () => { ({}).__proto__.isAdmin = true; return 'polluted'; };", {}, /TypeError: .*isAdmin/],
  cyclic: ["export default async () => { const a = {}; a.self = a; return a; };", {}, /the result is not JSON: TypeError/],
};

describe("hostile code tools", () => {
  it("each ends with a clear error in its tool.result, and the session's next turn succeeds", async () => {
    for (const [name, [source, extra]] of Object.entries(HOSTILE)) await registerCodeTool(name, source, extra);
    await registerCodeTool(
      "snoop",
      `export default async (args, ctx) => ({ globals: Object.getOwnPropertyNames(globalThis), ctx: Object.keys(ctx), secrets: Object.keys(ctx.secrets), self: typeof self, env: typeof env });`,
      { secrets: { MINE: "m" } },
    );
    const names = [...Object.keys(HOSTILE), "snoop"];
    const sid = await scriptedSession(
      [...names, "calculator"],
      [...callSteps(names.map((name) => ({ name }))), ...callSteps([{ name: "calculator", args: { expression: "6 * 7" } }], "42")],
      { max_steps: 40 },
    );
    const first = await runTurn(sid);
    expect(first.ended.type, JSON.stringify([first.ended.payload, first.results.map((r) => [r.payload.name, r.payload.output])])).toBe("turn.completed");
    const byName = new Map(first.results.map((r) => [r.payload.name, r.payload]));
    for (const [name, [, , said]] of Object.entries(HOSTILE)) {
      expect(byName.get(name)?.is_error, name).toBe(true);
      expect(byName.get(name)?.output, name).toMatch(said);
    }
    // What a script finds on globalThis and in ctx: nothing of the runtime's (no binding, no key, no other secret).
    const snoop = byName.get("snoop");
    expect(snoop?.is_error).toBe(false);
    expect(snoop?.output.ctx.sort()).toEqual(["secrets", "session_id", "tool_call_id", "turn_id"]);
    expect(snoop?.output.secrets).toEqual(["MINE"]);
    expect(snoop?.output.env).toBe("undefined");
    const runtimeNames =
      /^(SESSIONS|REGISTRY|INDEX|RATE_LIMITER|RESOURCES|BLOBS|LOADER|API_KEYS|TOKEN_SIGNING_SECRET|OPENAI_.*|ANTHROPIC_.*|TOOL_URL_ALLOWLIST)$/;
    expect(snoop?.output.globals.filter((g: string) => runtimeNames.test(g))).toEqual([]);
    // The runtime's own prototypes were never touched.
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();

    const second = await runTurn(sid, "again");
    expect(second.ended).toMatchObject({ type: "turn.completed", payload: { output: "42" } });
    expect(second.results[0].payload).toMatchObject({ name: "calculator", output: "42", is_error: false });
    expect((await expectOk("GET", "/v1/code-tools")).code_tools.length).toBeGreaterThanOrEqual(names.length);
    expect((await api("GET", "/healthz")).status).toBe(200);
  });
});
