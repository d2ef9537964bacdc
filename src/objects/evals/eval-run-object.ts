// One eval run (docs/guides/evals.md): its cases run as fresh sessions of the agent version, at most
// `concurrency` at once, driven by alarms. A case's session id is recorded before the session is opened and
// its turn is submitted under an idempotency key, so after a restart the next alarm watches the same sessions
// again: each case runs once.
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
import { evalsOf } from "../registry/evals-rpc";
import { registry } from "../registry/registry-object";
import { failed, runCase } from "./eval-case";
import { EvalRunStore, type RunSpec } from "./eval-run-store";

/** While a run has cases, an alarm this often picks up what a restart left (the watches of running cases). */
const WATCHDOG_MS = 2000;
/** A case whose watch failed this often (its session's object unreachable) ends as failed. */
const MAX_ATTEMPTS = 3;

export function evalRunObject(env: Pick<Env, "EVAL_RUNS">, id: string) {
  return env.EVAL_RUNS.get(env.EVAL_RUNS.idFromName(id));
}

export class EvalRunObject extends DurableObject<Env> {
  private readonly store: EvalRunStore;
  /** Cases this instance is watching (an instance after a restart starts with none). */
  private readonly watching = new Set<number>();
  private readonly attempts = new Map<number, number>();

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
      await this.report();
    }
    return this.store.view()!;
  }

  async view(): Promise<EvalRun | null> {
    return this.store.view();
  }

  async cases(): Promise<EvalCase[] | null> {
    return this.store.spec() ? this.store.cases() : null;
  }

  override async alarm(): Promise<void> {
    await this.tick();
  }

  /** Watches running cases nobody watches, starts pending ones while there is room, and finishes the run when all are done. */
  private async tick(): Promise<void> {
    const spec = this.store.spec();
    if (!spec || this.store.finished()) return;
    for (const row of this.store.rows("running")) if (!this.watching.has(row.idx)) this.watch(spec, row.idx, row.session_id!, row.turn_id);
    for (const row of this.store.rows("pending")) {
      if (this.watching.size >= spec.concurrency) break;
      const sid = randomId("ses");
      this.store.started(row.idx, sid); // recorded before the session exists: a restart resumes it
      this.watch(spec, row.idx, sid, null);
    }
    if (this.store.rows("pending").length + this.store.rows("running").length === 0) {
      this.store.finish(Date.now());
      await this.report();
      return;
    }
    await this.ctx.storage.setAlarm(Date.now() + WATCHDOG_MS);
  }

  private watch(spec: RunSpec, idx: number, sid: string, turnId: string | null): void {
    this.watching.add(idx);
    const calls = scorerCalls({
      resolveModel: (m) => resolveModel(m, providerEnv(this.env)),
      prices: parsePriceOverrides(this.env.MODEL_PRICES),
      allowlist: parseAllowlist(this.env.TOOL_URL_ALLOWLIST),
      fetch: (input, init) => fetch(input, init),
    });
    const steps = { submitted: (t: string) => this.store.submitted(idx, t) };
    const run = runCase(this.env, spec, idx, this.store.item(idx), { sid, turnId }, calls, steps)
      .then((outcome) => this.store.done(idx, outcome))
      .catch((err) => {
        const n = (this.attempts.get(idx) ?? 0) + 1;
        this.attempts.set(idx, n);
        // Left running, the next tick watches it again; past the attempts it ends as failed.
        if (n >= MAX_ATTEMPTS) this.store.done(idx, failed(`the case failed: ${errorMessage(err)}`, spec));
      })
      .finally(() => {
        this.watching.delete(idx);
        return this.tick();
      });
    this.ctx.waitUntil(run);
  }

  /** The registry's index of runs learns the run's state (what a label's gate reads). */
  private async report(): Promise<void> {
    const view = this.store.view();
    if (view) await evalsOf(registry(this.env)).recordRun(view);
  }
}
