// One eval run (docs/guides/evals.md): its cases run as fresh sessions of the agent version, at most
// `concurrency` at once and each under a lease of the deployment's (EVAL_MAX_CONCURRENT_CASES across all runs,
// eval-leases.ts), driven by alarms. A case's session id is recorded before the session is opened and its turn
// is submitted under an idempotency key, so after a restart the next alarm watches the same sessions again:
// each case runs once. A cancelled run starts no case and interrupts the turns of those running.
import { DurableObject } from "cloudflare:workers";
import { scorerCalls } from "../../engine/evals/scorer-calls";
import { resolveModel } from "../../engine/models";
import { parsePriceOverrides } from "../../engine/pricing";
import { parseAllowlist } from "../../engine/url-allowlist";
import type { Env } from "../../env";
import { randomId } from "../../ids";
import type { DatasetItem } from "../../protocol/datasets";
import { errorMessage } from "../../protocol/errors";
import type { EvalCase, EvalRun } from "../../protocol/evals";
import { providerEnv } from "../../providers";
import { EVAL_MIGRATIONS, migrate } from "../migrate";
import { maxConcurrentCases } from "../registry/eval-leases";
import { evalsOf } from "../registry/evals-rpc";
import { registry } from "../registry/registry-object";
import { CANCELLED, failed, runCase } from "./eval-case";
import { EvalRunStore, type RunSpec } from "./eval-run-store";
import { interruptTurn } from "./session-reads";

/** While a run has cases, an alarm this often picks up what a restart left (the watches of running cases). */
const WATCHDOG_MS = 2000;
/** A case whose watch failed this often (its session's object unreachable) ends as failed. */
const MAX_ATTEMPTS = 3;
/** A run whose cases wait for a lease asks again this late at most: the registry wakes it when one is free for it. */
export const LEASE_POLL_MS = 5000;

export function evalRunObject(env: Pick<Env, "EVAL_RUNS">, id: string) {
  return env.EVAL_RUNS.get(env.EVAL_RUNS.idFromName(id));
}

export class EvalRunObject extends DurableObject<Env> {
  private readonly store: EvalRunStore;
  /** Cases this instance is watching (an instance after a restart starts with none). */
  private readonly watching = new Set<number>();
  private readonly attempts = new Map<number, number>();
  /** Ticks run one after another: one awaits the registry's leases between reading and starting cases. */
  private ticks: Promise<void> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new EvalRunStore(ctx.storage.sql);
    void ctx.blockConcurrencyWhile(async () => {
      migrate(ctx.storage, EVAL_MIGRATIONS);
    });
  }

  /** Starts the run (once: a second start answers the run as it is). */
  async start(spec: RunSpec, items: DatasetItem[], createdBy: string | null): Promise<EvalRun> {
    if (!this.store.spec()) {
      this.store.create(spec, items, createdBy, Date.now());
      await this.ctx.storage.setAlarm(Date.now());
      await evalsOf(registry(this.env)).recordRun(this.store.view()!);
    }
    return this.store.view()!;
  }

  async view(): Promise<EvalRun | null> {
    return this.store.view();
  }

  async cases(): Promise<EvalCase[] | null> {
    return this.store.spec() ? this.store.cases() : null;
  }

  /**
   * Cancels a running run: no case starts any more, running cases' turns are interrupted and those cases end
   * `cancelled` (unscored); the cases done keep their results. `cancelled: false` when it had already ended.
   */
  async cancelRun(): Promise<{ run: EvalRun; cancelled: boolean } | null> {
    const spec = this.store.spec();
    if (!spec) return null;
    if (this.store.finished()) return { run: this.store.view()!, cancelled: false };
    const running = this.store.cancel(Date.now());
    const turns = running.filter((r) => r.session_id !== null && r.turn_id !== null);
    await Promise.allSettled(turns.map((r) => interruptTurn(this.env, r.session_id!, CANCELLED, spec.by)));
    await evalsOf(registry(this.env)).runEnded(this.store.view()!);
    return { run: this.store.view()!, cancelled: true };
  }

  /** The registry freed a lease for this run while its cases waited for one: it asks now. */
  async wake(): Promise<void> {
    this.ctx.waitUntil(this.tick());
  }

  override async alarm(): Promise<void> {
    await this.tick();
  }

  private tick(): Promise<void> {
    const next = this.ticks.then(() => this.step());
    this.ticks = next.catch(() => {}); // a failed tick (the alarm retries it) does not stop the ones after it
    return next;
  }

  /** Watches running cases nobody watches, starts pending ones while there is room and a lease, and finishes the run when all are done. */
  private async step(): Promise<void> {
    const spec = this.store.spec();
    if (!spec || this.store.finished()) return;
    for (const row of this.store.rows("running")) if (!this.watching.has(row.idx)) this.watch(spec, row.idx, row.session_id!, row.turn_id);
    const want = this.store
      .rows("pending")
      .slice(0, Math.max(0, spec.concurrency - this.watching.size))
      .map((r) => r.idx);
    let starved = false;
    if (want.length > 0) {
      let granted: number[] = [];
      try {
        granted = await evalsOf(registry(this.env)).acquireLeases(spec.id, want, maxConcurrentCases(this.env));
      } catch (err) {
        console.error(`eval run ${spec.id}: no leases: ${errorMessage(err)}`);
      }
      // Cancelled while the registry answered: give back what it granted.
      if (this.store.finished()) return evalsOf(registry(this.env)).runEnded(this.store.view()!);
      for (const idx of granted) {
        const sid = randomId("ses");
        this.store.started(idx, sid); // recorded before the session exists: a restart resumes it
        this.watch(spec, idx, sid, null);
      }
      starved = granted.length < want.length;
    }
    if (this.store.rows("pending").length + this.store.rows("running").length === 0) {
      this.store.finish(Date.now());
      await evalsOf(registry(this.env)).runEnded(this.store.view()!);
      return;
    }
    // Waiting for a lease, it asks again later too, in case the registry's wake was lost.
    await this.ctx.storage.setAlarm(Date.now() + (starved ? LEASE_POLL_MS : WATCHDOG_MS));
  }

  private watch(spec: RunSpec, idx: number, sid: string, turnId: string | null): void {
    this.watching.add(idx);
    const calls = scorerCalls({
      resolveModel: (m) => resolveModel(m, providerEnv(this.env)),
      prices: parsePriceOverrides(this.env.MODEL_PRICES),
      allowlist: parseAllowlist(this.env.TOOL_URL_ALLOWLIST),
      fetch: (input, init) => fetch(input, init),
    });
    const steps = { submitted: (t: string) => this.store.submitted(idx, t), cancelled: () => this.store.cancelled() };
    const run = runCase(this.env, spec, idx, this.store.item(idx), { sid, turnId }, calls, steps)
      .then((outcome) => this.store.done(idx, outcome))
      .catch((err) => {
        const n = (this.attempts.get(idx) ?? 0) + 1;
        this.attempts.set(idx, n);
        // Left running, the next tick watches it again; past the attempts it ends as failed.
        if (n >= MAX_ATTEMPTS) this.store.done(idx, failed(`the case failed: ${errorMessage(err)}`, spec));
      })
      .finally(async () => {
        this.watching.delete(idx);
        // A case that ended gives its lease back (one left running keeps it: the next tick watches it again).
        if (this.store.rows("running").every((r) => r.idx !== idx)) await evalsOf(registry(this.env)).caseEnded(this.store.view()!, idx);
        return this.tick();
      })
      .catch((err) => console.error(`eval run ${spec.id}, case ${idx}: ${errorMessage(err)}`));
    this.ctx.waitUntil(run);
  }
}
