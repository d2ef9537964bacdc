// Retention: a session idle for longer than the deployment's retention period erases itself from its own
// alarm, as DELETE does; a pending approval counts as activity until its deadline. The period here is a few
// seconds through the test-only SESSION_RETENTION_SECONDS_FOR_TESTS, in a whole runtime under `wrangler dev`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const KEY = "retention-test-key";
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY, SESSION_RETENTION_SECONDS_FOR_TESTS: "2", LOGS: "off" });
}, 90_000);
afterAll(() => rt?.stop());

const call = (method: string, path: string, body?: unknown) => rt.call(method, path, body);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

describe("retention", () => {
  it("an idle session erases itself; one waiting for an approval stays until the deadline has passed", async () => {
    const idle = (await call("POST", "/v1/sessions", { agent: { name: "idle", model: "demo:fast" } })).body.session_id;
    const waiting = (
      await call("POST", "/v1/sessions", {
        agent: { name: "careful", model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"], approval_timeout_ms: 6000 },
      })
    ).body.session_id;
    expect((await call("POST", `/v1/sessions/${waiting}/turns`, { input: "what is 2 + 2?" })).status).toBe(202);
    await until(async () => (await call("GET", `/v1/sessions/${waiting}/thread`)).body.pending_actions.length === 1, "the approval request", 10_000);
    expect((await call("GET", "/v1/sessions")).body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual(expect.arrayContaining([idle, waiting]));

    await until(async () => (await call("GET", `/v1/sessions/${idle}`)).status === 404, "the idle session to erase itself", 15_000);
    expect((await call("GET", "/v1/sessions")).body.sessions.map((s: { session_id: string }) => s.session_id)).not.toContain(idle);
    // Still waiting (its deadline is 6 s after the request): kept.
    expect((await call("GET", `/v1/sessions/${waiting}/thread`)).body.status).toBe("waiting_permission");

    // The approval times out, the turn ends, and two idle seconds later the session goes too.
    await until(async () => (await call("GET", `/v1/sessions/${waiting}`)).status === 404, "the other session to erase itself", 30_000);
    expect((await call("DELETE", `/v1/sessions/${waiting}`)).status).toBe(204);
  }, 60_000);
});
