// The run loop the in-process benchmarks share (files, subscriptions, fallback, auto-recall, busy): the
// bundled worker in Miniflare (miniflare.mjs), with the zero-latency scripted model (fake-llm.mjs) where it
// needs one, variants alternated so that drift of the machine falls on all of them alike, and the result
// printed as JSON.
import { startFakeLlm } from "./fake-llm.mjs";
import { startBundledRuntime } from "./miniflare.mjs";

/**
 * The bundled runtime with the fake model as its openai-compatible provider, and the fake's own webhook tools
 * (`${llmBase}/v1/_tools/...`) on the URL allowlist unless `bindings` sets another; `dispose()` stops both.
 */
export async function startWithFakeLlm(bindings = {}) {
  const llm = await startFakeLlm(0);
  const llmBase = `http://127.0.0.1:${llm.port}`;
  const runtime = await startBundledRuntime({ OPENAI_COMPATIBLE_BASE_URL: `${llmBase}/v1`, TOOL_URL_ALLOWLIST: `${llmBase}/`, ...bindings });
  return {
    ...runtime,
    llmBase,
    async dispose() {
      await runtime.dispose();
      llm.server.close();
    },
  };
}

/**
 * Prints what `measure()` returns as JSON (one line with BENCH_ONE_LINE=1, for `npm run bench`'s phases);
 * disposes `runtime` either way, so a failed run does not hang.
 */
export async function report(runtime, measure) {
  try {
    const result = await measure();
    console.log(process.env.BENCH_ONE_LINE === "1" ? JSON.stringify(result) : JSON.stringify(result, null, 2));
  } finally {
    await runtime.dispose();
  }
}

/** Each variant once to warm up, then `runs` rounds of each in turn; one array of results a variant. */
export async function alternate(runs, ...variants) {
  for (const variant of variants) await variant();
  const samples = variants.map(() => []);
  for (let i = 0; i < runs; i++) for (const [j, variant] of variants.entries()) samples[j].push(await variant());
  return samples;
}

/** A log's first turn.submitted to its first turn.completed, on the runtime's clock (ms). */
export function turnMs(events) {
  const at = (type) => {
    const event = events.find((e) => e.type === type);
    if (!event) throw new Error(`no ${type} in the log; it ends with ${JSON.stringify(events.at(-1))}`);
    return event.timestamp;
  };
  return at("turn.completed") - at("turn.submitted");
}
