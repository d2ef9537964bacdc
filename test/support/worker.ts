// The workerd pool's Worker: the runtime as a tenant's Worker makes it (createRuntime, as src/worker.ts does
// with none), with in-process tools the tests call (test/session/runner/in-process-tools.test.ts). Each
// records its side effects on the fake server's echo webhook (toolRequests() in fake-model.ts), so a test
// counts what ran; the gate tool holds its call open on the fake server's gates until its abortSignal fires.
import { env } from "cloudflare:workers";
import { z } from "zod";
import { createRuntime, type InProcessToolContext, tool } from "../../src/runtime";

const baseURL = () => (env as unknown as { OPENAI_COMPATIBLE_BASE_URL: string }).OPENAI_COMPATIBLE_BASE_URL;

/** Posts what a call did to the echo webhook, as a webhook tool's call would arrive there. */
async function record(name: string, args: unknown, context: unknown): Promise<void> {
  const body = JSON.stringify({ tool: name, args, ...(context as InProcessToolContext) });
  await (await fetch(`${baseURL()}/_tools/echo`, { method: "POST", headers: { "content-type": "application/json" }, body })).text();
}

/** A tool whose call waits on a gate of the fake server until the test releases it (or its abortSignal fires). */
const gateTool = () =>
  tool({
    description: "Waits on a gate of the fake server",
    inputSchema: z.object({ gate: z.string() }),
    execute: async ({ gate }, { abortSignal }) =>
      (await fetch(`${baseURL()}/_gates/${gate}`, { method: "POST", body: "{}", signal: abortSignal ?? null })).json(),
  });

const runtime = createRuntime({
  tools: {
    ts_lookup: tool({
      description: "Looks a word up",
      inputSchema: z.object({ word: z.string().min(1).describe("the word") }),
      execute: async ({ word }, { experimental_context }) => {
        await record("ts_lookup", { word }, experimental_context);
        return { word, meaning: `what ${word} means` };
      },
    }),
    ts_slow: {
      tool: tool({
        description: "Waits",
        inputSchema: z.object({ ms: z.number().int() }),
        execute: ({ ms }, { abortSignal, experimental_context }) =>
          new Promise<string>((resolve, reject) => {
            const timer = setTimeout(() => resolve(`waited ${ms} ms`), ms);
            abortSignal?.addEventListener("abort", () => {
              clearTimeout(timer);
              void record("ts_slow", { aborted: String(abortSignal.reason) }, experimental_context).finally(() => reject(abortSignal.reason));
            });
          }),
      }),
      timeout_ms: 200,
      permission_class: "safe",
    },
    // Both wait on a gate; a restart re-runs the idempotent one's cut call and gives the other's an error result.
    ts_gate: { tool: gateTool(), idempotent: true, permission_class: "safe" },
    ts_hold: { tool: gateTool(), permission_class: "safe" },
    ts_big: {
      tool: tool({
        description: "Answers `bytes` characters",
        inputSchema: z.object({ bytes: z.number().int() }),
        execute: async ({ bytes }) => "x".repeat(bytes),
      }),
      permission_class: "safe",
    },
  },
});

export const { SessionObject, RegistryObject, RateLimiter, IndexShardObject, ResourceMemoryObject, QuotaObject, EvalRunObject } = runtime.objects;
export const { CodeToolOutbound } = runtime.entrypoints;
export default runtime.worker;
