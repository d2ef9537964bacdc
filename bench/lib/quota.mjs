// The `quota` phase of `npm run bench` (docs/performance.md): what a quota check adds to a one-call turn, and
// how many reservations one quota object takes a second. The worker, bundled as for deploy, runs in Miniflare
// with the zero-latency scripted model (fake-llm.mjs). Alternating, a session whose end user no quota counts
// and one whose end user a quota on tokens and turns counts run the same one-call turn; turn time is
// turn.submitted to turn.completed on the runtime's clock. Then one quota object is sent reservations and
// their settlements straight through its binding, `width` at a time.
import { median, now, round } from "./client.mjs";
import { idleLog } from "./miniflare.mjs";
import { alternate, startWithFakeLlm, turnMs } from "./runs.mjs";

const MODEL = "openai-compatible:loop-s0-c0-d8";
const RULE = { id: "bench", limits: { input_tokens: 1e12, output_tokens: 1e12, turns: 1e9, concurrent_turns: 1e6 }, window: "day", action: "refuse" };

export async function quota(_stack, cfg, say) {
  const { runs, reservations, width } = cfg.quota;
  const runtime = await startWithFakeLlm({ TEST_HOOKS: "1" });
  try {
    const { call, mf } = runtime;
    const { id, ...spec } = RULE;
    await call("PUT", `/v1/quotas/${id}`, { ...spec, scope: { kind: "subject", id: "counted" } });
    await call("PUT", "/v1/agents/bench-quota", { model: MODEL });
    const turn = async (owner) => {
      const { session_id: sid } = await call("POST", "/v1/sessions", { agent: "bench-quota", owner });
      await call("POST", `/v1/sessions/${sid}/turns`, { input: "talk" });
      const events = await idleLog(call, sid);
      return turnMs(events);
    };
    const [free, counted] = await alternate(
      runs,
      () => turn("uncounted"),
      () => turn("counted"),
    );
    const object = (await mf.getDurableObjectNamespace("QUOTAS")).get((await mf.getDurableObjectNamespace("QUOTAS")).idFromName("subject:bench-throughput"));
    const spend = { usd: 0, input_tokens: 100, output_tokens: 50 };
    let next = 0;
    const t0 = now();
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (next < reservations) {
          const i = next++;
          const verdict = await object.reserve(`rsv_${i}`, "trn_bench", [RULE], spend);
          if (!verdict.ok) throw new Error(`reservation refused: ${verdict.message}`);
          await object.settle(`rsv_${i}`, [RULE], spend, "bench-throughput");
        }
      }),
    );
    const seconds = (now() - t0) / 1000;
    // The object's own work, without the RPCs: one request making and settling `reservations` (its writes committed once).
    const t1 = now();
    if ((await object.churn(reservations, [RULE], spend)) !== reservations) throw new Error("a churned reservation was refused");
    const inside = (now() - t1) / 1000;
    const out = {
      runs,
      turn_ms: { no_quota: round(median(free)), quota: round(median(counted)), added: round(median(counted) - median(free)) },
      object: { reservations, width, reservations_per_s: round(reservations / seconds, 0), in_object_per_s: round(reservations / inside, 0) },
      samples: { free, counted },
    };
    say(
      `   one-call turn ${out.turn_ms.no_quota} ms without a quota, ${out.turn_ms.quota} ms with one (+${out.turn_ms.added} ms); one quota object: ${out.object.reservations_per_s} reservations/s (each settled, ${width} at a time, each an RPC from Node), ${out.object.in_object_per_s}/s of its own work`,
    );
    return out;
  } finally {
    await runtime.dispose();
  }
}

/** The phase's rows in the table of `npm run bench`. */
export function quotaRows(q, row, f) {
  row(
    "Quota check on a one-call turn: added ms",
    f(q.turn_ms.added, 2),
    `turn ${f(q.turn_ms.no_quota, 1)} ms without, ${f(q.turn_ms.quota, 1)} ms with a token and turn quota; ${q.runs} runs each`,
  );
  row(
    "One quota object: reservations a second",
    `${f(q.object.reservations_per_s, 0)} / ${f(q.object.in_object_per_s, 0)}`,
    `each settled: ${q.object.width} at a time as RPCs from Node through Miniflare (each committed) / the object's own work in one request`,
  );
}
