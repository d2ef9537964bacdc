// Orchestration steps as child sessions: the runner an orchestrating session uses for each agent step, and
// how a child session's turn outcome reads as a step result.

import type { TurnPorts } from "../../engine/loop";
import { DEFAULT_ORCHESTRATION_LIMITS, type OrchestrationLimits } from "../../engine/orchestration/types";
import { callTimeout } from "../../engine/tools/http-io";
import type { Env } from "../../env";
import { joinResource } from "../../objects/memory/resource-memory-object";
import { agentConfig } from "../../objects/registry/agent-cache";
import type { Result } from "../../protocol/errors";
import { errorMessage } from "../../protocol/errors";
import type { Policy } from "../../protocol/policy";
import { type TerminalLike, turnOutcome } from "../../views/turn-outcome";

export type StepOutcome = { status: "success" | "failed"; output?: unknown; error?: string };

/** A child session's turn outcome as an orchestration step sees it: only a final answer is a success. */
export function stepOutcome(end: TerminalLike): StepOutcome {
  const o = turnOutcome(end);
  if (o.status === "completed") {
    return o.stop_reason === "final_answer"
      ? { status: "success", output: o.output }
      : { status: "failed", output: o.output, error: `stopped: ${o.stop_reason}` };
  }
  if (o.status === "failed") return { status: "failed", error: o.error?.message ?? "the turn failed" };
  return { status: "failed", error: `cancelled: ${o.reason ?? ""}`.trim() };
}

/** agent_orchestrate limits: ORCHESTRATE_MAX_DEPTH / _STEPS / _PARALLEL, each clamped to a hard cap. */
export function orchestrationLimits(env: Env): Omit<OrchestrationLimits, "depth"> {
  const read = (raw: string | undefined, fallback: number, cap: number) => {
    const n = Number(raw);
    return Number.isInteger(n) && n >= 1 ? Math.min(n, cap) : fallback;
  };
  return {
    max_depth: read(env.ORCHESTRATE_MAX_DEPTH, DEFAULT_ORCHESTRATION_LIMITS.max_depth, 5),
    max_steps: read(env.ORCHESTRATE_MAX_STEPS, DEFAULT_ORCHESTRATION_LIMITS.max_steps, 50),
    max_parallel: read(env.ORCHESTRATE_MAX_PARALLEL, DEFAULT_ORCHESTRATION_LIMITS.max_parallel, 16),
  };
}

/**
 * One agent step of an orchestration: the registered agent runs as its own child session `exec_id` (its own
 * object, log and read models), and this resolves with that session's turn outcome. Idempotent by exec_id:
 * after a restart of either side the same child turn is awaited again, never started twice.
 */
export async function runChildSession(
  env: Env,
  parent: { session_id: string; turn_id: string; policy: Policy; resource_id: string | null; owner: string | null; by: string | null },
  request: Parameters<TurnPorts["runAgent"]>[0],
): Promise<StepOutcome> {
  const { exec_id, agent, input, timeout_ms, signal, depth } = request;
  const config = await agentConfig(env, agent);
  if (!config) return { status: "failed", error: `Agent "${agent}" is not registered` };
  const child = env.SESSIONS.get(env.SESSIONS.idFromName(exec_id));
  const metadata = { parent_session_id: parent.session_id, parent_turn_id: parent.turn_id };
  // The child acts for the parent's end user: it uses that resource's memory and is erased with it.
  const resource_id = await joinResource(env, parent.resource_id, exec_id);
  const created = (await child.create({
    session_id: exec_id,
    agent: config,
    policy: parent.policy,
    metadata,
    orchestration_depth: depth,
    resource_id,
    owner: parent.owner,
  })) as Result<unknown>;
  if (!created.ok && created.error.code !== "conflict") return { status: "failed", error: created.error.message };
  const limit = callTimeout(timeout_ms, signal);
  const stopped = new Promise<never>((_, reject) => limit.signal.addEventListener("abort", () => reject(limit.signal.reason), { once: true }));
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = (await Promise.race([child.runToEnd(input, exec_id, parent.by), stopped])) as Result<StepOutcome>;
        return outcome.ok ? outcome.value : { status: "failed", error: outcome.error.message };
      } catch (err) {
        if (limit.signal.aborted) {
          const reason = limit.timedOut() ? `the step timed out after ${timeout_ms} ms` : `interrupted: ${errorMessage(limit.signal.reason)}`;
          await child.call("interrupt", { params: { sid: exec_id }, body: { reason }, by: "orchestration" });
          if (limit.timedOut()) return { status: "failed", error: `timed out after ${timeout_ms} ms` };
          throw err;
        }
        // The child's object restarted under the call: wait for the same turn again, a few times.
        if (attempt >= 3) return { status: "failed", error: errorMessage(err) };
      }
    }
  } finally {
    limit.clear();
  }
}
