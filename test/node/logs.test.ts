// Logs, as Workers Logs receives them: one JSON line per request and one per turn end, with the caller as a
// key id and never the key itself.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const KEY = "log-test-key-do-not-print";
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY });
}, 90_000);
afterAll(() => rt?.stop());

const lines = () =>
  rt
    .output()
    .split("\n")
    .flatMap((l) => {
      const at = l.indexOf('{"log":');
      return at >= 0 ? [JSON.parse(l.slice(at))] : [];
    });

describe("structured logs", () => {
  it("writes a line per request and per turn end, without keys or payloads", async () => {
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const created = await fetch(`${rt.base}/v1/sessions`, { method: "POST", headers, body: JSON.stringify({ agent: { name: "logged", model: "demo:fast" } }) });
    const { session_id } = (await created.json()) as { session_id: string };
    const turn = await fetch(`${rt.base}/v1/sessions/${session_id}/turns`, { method: "POST", headers, body: JSON.stringify({ input: "a secret input" }) });
    const { turn_id } = (await turn.json()) as { turn_id: string };
    await fetch(`${rt.base}/v1/agents`, { headers: { authorization: "Bearer wrong" } });

    const deadline = Date.now() + 10_000;
    while (!lines().some((l) => l.log === "turn") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const requests = lines().filter((l) => l.log === "request");
    expect(requests).toContainEqual(
      expect.objectContaining({ method: "POST", route: "/v1/sessions/:sid/turns", status: 202, caller: expect.stringMatching(/^key_[0-9a-f]{16}$/) }),
    );
    expect(requests).toContainEqual(expect.objectContaining({ method: "GET", status: 401, caller: null }));
    expect(requests.every((l) => typeof l.duration_ms === "number")).toBe(true);
    expect(lines().find((l) => l.log === "turn")).toMatchObject({
      session_id,
      turn_id,
      agent: "logged",
      status: "completed",
      stop_reason: "final_answer",
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
    });
    expect(rt.output()).not.toContain(KEY);
    expect(rt.output()).not.toContain("a secret input");
  }, 60_000);
});
