// The end-to-end comparison: a turn as a user feels it. The runtime under `wrangler dev`: a fresh
// session per turn whose agent has the scripted server's webhook as an http_tools entry, the turn POSTed
// over HTTP and watched over a WebSocket from sequence 0 until turn.completed. Against it, alternating: a
// bare generateText loop in this Node process with a `lookup` tool POSTing to the same webhook, and the
// same bare loop inside workerd (the baseline worker: the floor on this platform).
import { bareLoop } from "./bare-loop.mjs";
import { median, now, terminalAny } from "./client.mjs";
import { splitTurn } from "./timeline.mjs";

/** The e2e turns' agent: the scripted model and the scripted server's webhook as its `lookup` http tool. */
export function benchAgent(stack, model, maxSteps) {
  const lookupUrl = `${stack.fake.baseUrl}/_tools/lookup`;
  return {
    name: "bench-e2e",
    model: `openai-compatible:${model}`,
    max_steps: maxSteps,
    // A long turn raises the default caps (60 model calls, 200 tool calls) up to the deployment's maxima.
    ...(maxSteps > 60 ? { budget: { max_total_llm_calls: maxSteps, max_total_tool_calls: 4 * maxSteps } } : {}),
    http_tools: [
      { name: "lookup", description: "Looks something up.", url: lookupUrl, parameters: { type: "object", properties: { query: { type: "string" } } } },
    ],
  };
}

/**
 * How the e2e client watches a turn: WebSocket frames as the runtime's own client asks for them (frames=batch: the
 * events of one commit in one frame); BENCH_WS_FRAMES=event watches with the protocol's default, a frame an event.
 */
export function watchOptions(keep) {
  return { keep, deflate: false, batch: process.env.BENCH_WS_FRAMES !== "event" };
}

/** Throws unless the frame that ended the turn (one event, or a batch ending with it) says turn.completed. */
export function assertCompleted(frame) {
  const parsed = JSON.parse(frame);
  const end = Array.isArray(parsed) ? parsed.findLast((e) => /^turn\.(completed|failed|cancelled)$/.test(e.type)) : parsed;
  if (end?.type !== "turn.completed") throw new Error(`turn ended ${end?.type}: ${frame.slice(0, 300)}`);
}

export async function runtimeTurn(stack, model, maxSteps) {
  const { api } = stack;
  const { session_id } = await api.req("POST", "/v1/sessions", { agent: benchAgent(stack, model, maxSteps) });
  const sub = api.subscribe(session_id, 0, watchOptions(true));
  await sub.opened;
  const done = sub.waitFor(terminalAny);
  const t0 = now();
  await api.submit(session_id);
  const { t, s } = await done;
  sub.close();
  assertCompleted(s);
  return { ms: t - t0, events: sub.count, sid: session_id, t0, frames: sub.frames };
}

/** The bare loop inside workerd: plain (`/run`), or with the runtime's commits in a Durable Object (`/durable-run`); generateText, or streamText with `mode: "stream"`. */
export async function workerdLoop(stack, model, steps, path = "/run", mode = "generate") {
  const t0 = now();
  const res = await fetch(`${stack.blBase}${path}`, { method: "POST", body: JSON.stringify({ model, steps, mode, tool: "lookup" }) });
  const j = await res.json();
  if (res.status !== 200) throw new Error(`baseline ${res.status}: ${JSON.stringify(j)}`);
  return { ms: now() - t0 };
}

/**
 * A long turn (bench/ab.mjs's `long_turn`): `steps` webhook calls one per step, each call's arguments
 * padded with `pad` characters, so the conversation the runtime resends grows by about that much a step.
 */
export function longTurnShape({ steps = 300, pad = 1000 } = {}) {
  return { model: `loop-s${steps}-c1-d5-a${pad}-tlookup`, maxSteps: steps + 2 };
}

/** Median time (ms) from one step's model.requested to the next, over the steps [from, to) of a turn's events. */
export function stepMs(events, from, to) {
  const at = events.filter((e) => e.type === "model.requested").map((e) => e.timestamp);
  const gaps = at.slice(from + 1, to + 1).map((t, i) => t - at[from + i]);
  return median(gaps);
}

/** The two turns compared (also by bench/peer/run.mjs): the scripted model's name and the step limit. */
export function e2eShapes({ steps, calls, deltas }) {
  return {
    tool_turn: { model: `loop-s${steps}-c${calls}-d${deltas}-tlookup`, maxSteps: steps + 2 },
    one_call: { model: `loop-s0-c0-d${deltas}-tlookup`, maxSteps: 2 },
  };
}

export async function e2e(stack, cfg, say) {
  const { runs, warmup } = cfg.e2e;
  const bare = bareLoop(stack.fake.baseUrl);
  const out = {};
  for (const [name, { model, maxSteps }] of Object.entries(e2eShapes(cfg.e2e))) {
    const sides = {
      runtime: () => runtimeTurn(stack, model, maxSteps),
      bare_node: () => bare(model, maxSteps),
      bare_workerd: () => workerdLoop(stack, model, maxSteps),
      durable_floor: () => workerdLoop(stack, model, maxSteps, "/durable-run"),
      // The same floor streaming each answer in, as the runtime does to record and forward its deltas.
      durable_streaming: () => workerdLoop(stack, model, maxSteps, "/durable-run", "stream"),
    };
    const ms = { runtime: [], bare_node: [], bare_workerd: [], durable_floor: [], durable_streaming: [] };
    const ratios = [];
    let lastSid = null;
    for (let i = 0; i < warmup + runs; i++) {
      const r = {};
      for (const [side, run] of Object.entries(sides)) {
        const result = await run();
        r[side] = result.ms;
        if (result.sid) lastSid = result.sid;
      }
      if (i < warmup) continue;
      for (const side of Object.keys(sides)) ms[side].push(r[side]);
      ratios.push(r.runtime / r.bare_node);
    }
    const med = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, median(v)]));
    out[name] = {
      model,
      runs,
      ms,
      median: med,
      ratio: med.runtime / med.bare_node,
      median_of_ratios: median(ratios),
      ratio_to_workerd_floor: med.runtime / med.bare_workerd,
      ratio_to_durable_floor: med.runtime / med.durable_floor,
      ratio_to_durable_streaming: med.runtime / med.durable_streaming,
      server_timeline: splitTurn(await stack.api.events(lastSid)),
    };
    say(
      `   ${name}: runtime ${med.runtime.toFixed(1)} ms, bare generateText (Node) ${med.bare_node.toFixed(1)} ms, bare in workerd ${med.bare_workerd.toFixed(1)} ms, durable floor ${med.durable_floor.toFixed(1)} ms, streaming ${med.durable_streaming.toFixed(1)} ms; ratio ${out[name].ratio.toFixed(2)}x (to the workerd floor ${out[name].ratio_to_workerd_floor.toFixed(2)}x, to the durable floor ${out[name].ratio_to_durable_floor.toFixed(2)}x, to it streaming ${out[name].ratio_to_durable_streaming.toFixed(2)}x)`,
    );
    const tl = out[name].server_timeline;
    say(
      `     inside the session (last turn, event timestamps): ${tl.total} ms = model calls ${tl.model_calls} (${tl.steps} calls) + tool phases ${tl.tool_phases} + the rest ${tl.other}`,
    );
  }
  return out;
}

/** Table rows for bench/run.mjs. */
export function e2eRows(r, row, f) {
  const t = r.tool_turn;
  const o = r.one_call;
  row(
    "End to end, tool turn: runtime / bare generateText (Node)",
    `${f(t.median.runtime)} / ${f(t.median.bare_node)} ms = ${f(t.ratio, 2)}x`,
    `10 steps x 4 webhook calls + answer over HTTP, watched over a WS; bare inside workerd ${f(t.median.bare_workerd)} ms (runtime ${f(t.ratio_to_workerd_floor, 2)}x that), with the runtime's commits (durable floor) ${f(t.median.durable_floor)} ms (runtime ${f(t.ratio_to_durable_floor, 2)}x that), streaming ${f(t.median.durable_streaming)} ms (${f(t.ratio_to_durable_streaming, 2)}x); median of per-run ratios ${f(t.median_of_ratios, 2)}x; ${t.runs} runs`,
  );
  row(
    "End to end, one-call turn: runtime / bare generateText (Node)",
    `${f(o.median.runtime)} / ${f(o.median.bare_node)} ms`,
    `difference ${f(o.median.runtime - o.median.bare_node)} ms; bare inside workerd ${f(o.median.bare_workerd)} ms, durable floor ${f(o.median.durable_floor)} ms, streaming ${f(o.median.durable_streaming)} ms`,
  );
}
