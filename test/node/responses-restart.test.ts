// A Responses stream resumed with `starting_after` after the whole runtime process died mid-response and came
// back on the same state: the events read before the restart and those after N together are exactly the
// response's stream, none lost, none repeated.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { describe, expect, it } from "vitest";
import { callRuntime, runtimeProcess, until, workerBundle } from "./support/runtime-process";

const KEY = "responses-restart-key";
const bundle = workerBundle();

const runtime = (state: string): Miniflare => runtimeProcess(bundle, state, { API_KEYS: KEY, LOGS: "off" });

/** The Responses events of an SSE body. */
const sse = (text: string) =>
  text
    .split("\n\n")
    .filter((b) => b.startsWith("event: "))
    .map((b) => JSON.parse(b.split("\n")[1]!.slice(6)) as { type: string; sequence_number: number });

describe("a Responses stream across a restart of the runtime", () => {
  it("resumes after event N with exactly what followed it", async () => {
    const state = mkdtempSync(join(tmpdir(), "agent-runtime-responses-"));
    let mf = runtime(state);
    try {
      await callRuntime(mf, KEY, "PUT", "/v1/agents/slow", { model: "demo:slow" });
      const created = await callRuntime(mf, KEY, "POST", "/v1/responses", { model: "slow", input: "hello", background: true });
      expect(created.status).toMatch(/^(queued|in_progress)$/);
      // Read the live stream until a few text deltas came, then the process dies.
      const res = await mf.dispatchFetch(`http://runtime/v1/responses/${created.id}?stream=true`, { headers: { authorization: `Bearer ${KEY}` } });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (sse(text.slice(0, text.lastIndexOf("\n\n") + 2)).filter((e) => e.type === "response.output_text.delta").length < 3) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      await reader.cancel().catch(() => {});
      const before = sse(text.slice(0, text.lastIndexOf("\n\n") + 2));
      await mf.dispose();
      mf = runtime(state);
      const n = before.at(-1)!.sequence_number;
      const after = await mf.dispatchFetch(`http://runtime/v1/responses/${created.id}?stream=true&starting_after=${n}`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      const rest = sse(await after.text());
      expect(rest.at(-1)!.type).toBe("response.completed");
      const whole = [...before, ...rest];
      expect(whole.map((e) => e.sequence_number)).toEqual(whole.map((_, i) => i));
      // The whole stream read again after the restart is the same events.
      const again = await mf.dispatchFetch(`http://runtime/v1/responses/${created.id}?stream=true`, { headers: { authorization: `Bearer ${KEY}` } });
      expect(sse(await again.text())).toEqual(whole);
      await until(async () => (await callRuntime(mf, KEY, "GET", `/v1/responses/${created.id}`)).status === "completed");
    } finally {
      await mf.dispose();
      rmSync(state, { recursive: true, force: true });
    }
  }, 120_000);
});
