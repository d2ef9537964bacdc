// A non-idempotent tool call is not aborted when its turn ends while it runs (an interrupt, on_busy
// "interrupt" or "rollback", a budget): its request may already have had its effect, and stopping it would
// only hide the outcome. The turn stops waiting for it (the call is closed in the turn, as any call in
// flight), the call keeps running, and its outcome, once it arrives, is recorded as tool.result.late, a fact
// of the log that does not enter the conversation (docs/guides/busy-sessions.md).
import { errorMessage } from "../protocol/errors";
import { redactStage } from "./guardrails/run";
import { forLog, refsOf } from "./tool-spill";
import type { ToolContext, ToolDefinition } from "./tools/types";
import type { Level, Turn } from "./turn-context";
import { resultMetadata, type ToolCallRecord } from "./turn-state";

/** What a tool's execute ended with. */
interface Settled {
  output: unknown;
  is_error: boolean;
}

/**
 * Runs the tool's execute for `call`. An idempotent tool runs with the turn's signal (a cut aborts it, as
 * before); any other runs until it settles, and if the turn ends first, throws the turn's abort while the
 * call goes on and its outcome is recorded late.
 */
export async function executeTool(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
  call: ToolCallRecord,
  level: Level,
  turn: Turn,
  injected: Record<string, unknown>,
): Promise<unknown> {
  if (tool.idempotent) return tool.execute(args, ctx);
  // Its own signal, which nothing aborts: its timeouts end it, never the turn. (One per call: the Workers
  // runtime ties an AbortSignal to the object that made it.)
  const running: Promise<Settled> = tool.execute(args, { ...ctx, signal: new AbortController().signal }).then(
    (output) => ({ output, is_error: false }),
    (err) => ({ output: errorMessage(err), is_error: true }),
  );
  // One listener a call (listeners cost a few µs each in workerd): while the call runs, a cut ends the wait;
  // once its result is in, a cut records it late, until recorded() says the turn's tool.result holds it.
  let waited: Settled | null = null;
  let stopWaiting = (_: null) => {};
  const cutWhileRunning = new Promise<null>((resolve) => {
    stopWaiting = resolve;
  });
  const cut = () => (waited ? void recordLate(waited, call, level, turn, injected) : stopWaiting(null));
  if (turn.signal.aborted) stopWaiting(null);
  else turn.signal.addEventListener("abort", cut, { once: true });
  const settled = await Promise.race([running, cutWhileRunning]);
  // Checked after the race as well: a result that came with the cut is not the turn's either.
  if (!settled || turn.signal.aborted) {
    void running.then((r) => recordLate(r, call, level, turn, injected));
    throw turn.signal.reason;
  }
  // The result is in, but the turn records it only after its checks (guardrails, files, a spill to R2).
  waited = settled;
  unrecorded.set(call, () => turn.signal.removeEventListener("abort", cut));
  if (settled.is_error) throw new Error(String(settled.output));
  return settled.output;
}

/** Calls whose result arrived and is not yet in the turn's tool.result: how to stop waiting for a cut. */
const unrecorded = new WeakMap<ToolCallRecord, () => void>();

/** The turn records `call`'s tool.result now (synchronously, so no cut comes between): nothing is late. */
export function recorded(call: ToolCallRecord): void {
  unrecorded.get(call)?.();
  unrecorded.delete(call);
}

/**
 * Records the outcome of a call that outlived its turn: redacted by the tool_output redaction rules (the
 * deciding rules judge what the model would see, and it sees nothing of it), spilled when large, with the
 * metadata tool.result has. Files it returns are not kept as session files. A failure is only logged: the
 * turn has ended and nothing waits for it.
 */
async function recordLate(r: Settled, call: ToolCallRecord, level: Level, turn: Turn, injected: Record<string, unknown>): Promise<void> {
  const { state, run } = level;
  try {
    const completed_at = turn.ports.now();
    const redacted = redactStage(run.setup.config.guardrails, "tool_output", r.output ?? null).value;
    const spilled = await forLog(redacted, call, state, run.setup, turn);
    const metadata = resultMetadata(call, r.is_error, call.started_at ?? completed_at, completed_at, injected, spilled.artifact?.id ?? null);
    turn.ports.recordLate({
      type: "tool.result.late",
      payload: { turn_id: state.turn_id, tool_call_id: call.tool_call_id, name: call.name, output: spilled.value, is_error: r.is_error, metadata },
      ...refsOf(spilled.artifact),
    });
  } catch (err) {
    console.error("recording the late result of a tool call failed", call.tool_call_id, err);
  }
}
