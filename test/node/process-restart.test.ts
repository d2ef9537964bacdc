// Crash recovery across a whole runtime process: the worker (bundled as for deploy) runs in a Miniflare
// instance on a persisted directory; mid-turn the whole instance is disposed (its workerd process ends, as
// in a crash or a deploy), and a new instance on the same state carries on. Each log passes the verifier.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { describe, expect, it } from "vitest";
import { verifyLog } from "../../src/engine/verify-log";
import type { Step } from "../support/fake-model";
import { bundledWithFakeModel, callRuntime, runtimeProcess, until } from "./support/runtime-process";

const KEY = "restart-key";
const setup = bundledWithFakeModel();

function runtime(state: string): Miniflare {
  return runtimeProcess(setup.bundle, state, {
    API_KEYS: KEY,
    OPENAI_COMPATIBLE_BASE_URL: setup.fakeBase,
    TOOL_URL_ALLOWLIST: `${setup.fakeBase}/`,
    LOGS: "off",
  });
}

const call = (mf: Miniflare, method: string, path: string, body?: unknown) => callRuntime(mf, KEY, method, path, body);

async function log(mf: Miniflare, sid: string): Promise<any[]> {
  return (await call(mf, "GET", `/v1/sessions/${sid}/events?after=0&limit=1000`)).events;
}

async function script(steps: Step[]): Promise<string> {
  const id = `restart-${crypto.randomUUID()}`;
  await fetch(`${setup.fakeBase}/_scripts/${id}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ steps }) });
  return id;
}

const SCENARIOS: { name: string; steps: Step[]; agent: Record<string, unknown>; turns: number; cutWhen: (events: any[]) => boolean; decide?: boolean }[] = [
  {
    name: "a model stream",
    steps: [{ text: "a long answer that streams slowly", chunk_size: 2, delay_ms: 40 }, { text: "the answer again" }],
    agent: {},
    turns: 1,
    cutWhen: (es) => es.some((e) => e.type === "model.delta"),
  },
  {
    name: "a tool call",
    steps: [{ tool_calls: [{ name: "slow", arguments: {} }] }, { text: "done after the tool" }],
    agent: { http_tools: [{ name: "slow", url: "SLOW_URL", timeout_ms: 10_000 }] },
    turns: 1,
    cutWhen: (es) => es.some((e) => e.type === "tool.started"),
  },
  {
    name: "an approval wait",
    steps: [{ tool_calls: [{ name: "calculator", arguments: { expression: "6 * 7" } }] }, { text: "It is 42." }],
    agent: { tools: ["calculator"], hitl_tools: ["calculator"] },
    turns: 1,
    cutWhen: (es) => es.some((e) => e.type === "action.required"),
    decide: true,
  },
  {
    name: "queued turns",
    steps: [{ text: "first, slowly", chunk_size: 2, delay_ms: 40 }, { text: "first again" }, { text: "second" }, { text: "third" }],
    agent: {},
    turns: 3,
    cutWhen: (es) => es.some((e) => e.type === "model.delta"),
  },
];

describe("a runtime process that dies mid-turn and comes back on the same state", () => {
  for (const s of SCENARIOS) {
    it(`finishes ${s.name} after the restart, with a sound log`, async () => {
      const state = mkdtempSync(join(tmpdir(), "agent-runtime-state-"));
      const model = `openai-compatible:${await script(s.steps)}`;
      const agent = JSON.parse(JSON.stringify({ name: "restart", model, ...s.agent }).replace("SLOW_URL", `${setup.fakeBase}/_tools/slow?ms=1500`));
      let mf = runtime(state);
      try {
        const { session_id: sid } = await call(mf, "POST", "/v1/sessions", { agent });
        for (let i = 0; i < s.turns; i++) await call(mf, "POST", `/v1/sessions/${sid}/turns`, { input: `turn ${i + 1}` });
        await until(async () => s.cutWhen(await log(mf, sid)));
        await mf.dispose(); // the whole process ends here, mid-turn
        mf = runtime(state);
        if (s.decide) {
          const { pending_actions } = await call(mf, "GET", `/v1/sessions/${sid}/thread`);
          expect(pending_actions).toHaveLength(1);
          await call(mf, "POST", `/v1/sessions/${sid}/actions/${pending_actions[0].action_id}`, { decision: "approve" });
        }
        await until(async () => (await log(mf, sid)).filter((e) => e.type === "turn.completed").length === s.turns);
        const events = await log(mf, sid);
        expect(verifyLog(events)).toEqual([]);
        expect(events.filter((e) => e.type.startsWith("turn.") && e.type !== "turn.submitted" && e.type !== "turn.started").map((e) => e.type)).toEqual(
          Array(s.turns).fill("turn.completed"),
        );
        if (!s.decide) expect(events.some((e) => e.type === "run.status" && e.payload.phase === "recovering")).toBe(true);
      } finally {
        await mf.dispose();
        rmSync(state, { recursive: true, force: true });
      }
    }, 60_000);
  }
});
