// Model fallback (docs/guides/model-fallback-and-caching.md): one model call tried on each model of the agent's chain (`model`, then
// `fallback_models`) with the same request, until one answers. A model is given up after the retries of a
// retryable error (429, 5xx, network), or when it sends nothing within first_token_timeout_ms; once a model has
// streamed part of its answer, a failure fails the call (what reached clients cannot be taken back).
// model_timeout_ms bounds the whole call, fallbacks included. A model whose breaker is open (model-breaker.ts)
// is tried last, after a model.fallback that says why it was skipped.
import { APICallError, type LanguageModelV3, type LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { errorMessage } from "../protocol/errors";
import type { Breaker } from "./model-breaker";
import { type ModelPart, RetriesFailed, streamModel } from "./model-stream";
import { withPromptCache } from "./prompt-cache";

/** One model of the chain; resolved only when it is tried. */
export interface ModelChoice {
  spec: string;
  model: () => LanguageModelV3;
}

export interface ChainOptions {
  firstTokenTimeoutMs?: number | null;
  callTimeoutMs?: number | null;
  /** The session's prompt cache key (OpenAI's prompt_cache_key). */
  cacheKey?: string;
  /** The turn's signal (interrupt, budget). */
  signal: AbortSignal;
  /** The models' breakers (absent: every model is tried in order). */
  breaker?: Breaker;
  /** `skipped`: `from` was not tried, its breaker being open. */
  onFallback(from: string, to: string, reason: string, skipped?: boolean): void;
}

/** The chain with the models the breaker skips moved last (unless it skips them all), and why each is skipped. */
function ordered(chain: ModelChoice[], breaker: Breaker | undefined): { order: ModelChoice[]; skipped: Map<string, string> } {
  const skipped = new Map<string, string>();
  if (!breaker || chain.length === 1) return { order: chain, skipped };
  for (const { spec } of chain) {
    const reason = breaker.skip(spec);
    if (reason !== null) skipped.set(spec, reason);
  }
  if (skipped.size === chain.length) return { order: chain, skipped: new Map() };
  return { order: [...chain.filter((c) => !skipped.has(c.spec)), ...chain.filter((c) => skipped.has(c.spec))], skipped };
}

class Timeout extends Error {}

/**
 * The stream of the first model of `chain` that answers; its `finish` names the model that answered. Throws
 * the model's own error when the chain is one model, else an error naming each model tried and its error.
 */
export async function* streamChain(chain: ModelChoice[], options: LanguageModelV3CallOptions, o: ChainOptions): AsyncGenerator<ModelPart> {
  const call = new AbortController();
  const callSignal = AbortSignal.any([o.signal, call.signal]);
  const callTimer = o.callTimeoutMs
    ? setTimeout(() => call.abort(new Timeout(`the model call took longer than model_timeout_ms (${o.callTimeoutMs} ms)`)), o.callTimeoutMs)
    : null;
  const failed: string[] = [];
  const { order, skipped } = ordered(chain, o.breaker);
  // The models skipped ahead of the first one tried: the call went past them.
  for (const c of chain.slice(0, chain.indexOf(order[0]!))) o.onFallback(c.spec, order[0]!.spec, skipped.get(c.spec)!, true);
  try {
    for (const [i, { spec, model }] of order.entries()) {
      const attempt = new AbortController();
      const attemptSignal = AbortSignal.any([callSignal, attempt.signal]);
      const ms = o.firstTokenTimeoutMs;
      const firstToken = ms ? setTimeout(() => attempt.abort(new Timeout(`no first token within first_token_timeout_ms (${ms} ms)`)), ms) : null;
      let started = false;
      o.breaker?.trying(spec);
      try {
        for await (const part of streamModel(model(), { ...withPromptCache(spec, options, o.cacheKey), abortSignal: attemptSignal })) {
          started = true;
          if (firstToken !== null) clearTimeout(firstToken);
          yield part.type === "finish" ? { ...part, model: part.model ?? spec } : part;
        }
        o.breaker?.answered(spec);
        return;
      } catch (err) {
        if (o.signal.aborted) throw err;
        if (callSignal.aborted) throw callSignal.reason;
        const timedOut = attempt.signal.reason instanceof Timeout;
        const reason = timedOut ? (attempt.signal.reason as Error).message : errorMessage(err);
        if (chain.length === 1 || started) throw err;
        failed.push(`${spec}: ${reason}`);
        if (!timedOut && !fallsBack(err)) {
          o.breaker?.answered(spec);
          throw new Error(`${failed.join("; ")} (not retryable: no fallback)`);
        }
        o.breaker?.failed(spec);
        const next = order[i + 1];
        if (next) o.onFallback(spec, next.spec, reason);
      } finally {
        if (firstToken !== null) clearTimeout(firstToken);
      }
    }
    throw new Error(`Every model failed: ${failed.join("; ")}`);
  } finally {
    if (callTimer !== null) clearTimeout(callTimer);
  }
}

/** Whether a model's failure is worth the next model: a retryable error after its retries, a network error, a broken stream. */
function fallsBack(err: unknown): boolean {
  if (err instanceof RetriesFailed) return err.retryable;
  if (APICallError.isInstance(err)) return err.isRetryable;
  return true;
}
