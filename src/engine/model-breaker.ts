// A circuit breaker per model (docs/guides/model-fallback-and-caching.md). One failure that makes a call fall back
// (a retryable error after its retries, or no first token in time) opens the model's breaker: the rest of the
// turn, and calls of later turns for the agent's fallback_cooldown_ms, skip it and go straight to the next model.
// The first call after the cool-down tries it again (half-open; the others keep skipping it meanwhile): an
// answer, or an error that is not the model's being down (a 400), closes the breaker, a failure opens it for
// another cool-down. A skipped model is tried last rather than never, so a call fails only when every model did.
// The breakers live in the isolate's memory, shared by the sessions it hosts: another isolate, or a restarted
// one, learns that a model is down from one failure of its own. Persisting them would cost a write per failure
// on a shared object for what one failed request per isolate and cool-down already gives.

/** When each model's breaker opened (or its trial call began), by model spec. */
const openedAt = new Map<string, number>();

export interface Breaker {
  /** Why this call skips `spec`, or null to try it in its place. */
  skip(spec: string): string | null;
  /** The call sends its request to `spec` now. */
  trying(spec: string): void;
  /** `spec` failed and the call fell back (or gave up): its breaker opens. */
  failed(spec: string): void;
  /** `spec` answered (or refused the request, which it would not do when down): its breaker closes. */
  answered(spec: string): void;
}

/** The breakers as seen by one call of a turn: `failedInTurn` holds the models the turn saw fail over. */
export function modelBreaker(failedInTurn: Set<string>, cooldownMs: number, now: () => number = Date.now): Breaker {
  return {
    skip(spec) {
      if (failedInTurn.has(spec)) return `skipped: it failed earlier in this turn`;
      const at = openedAt.get(spec);
      if (at === undefined) return null;
      const since = now() - at;
      if (since >= cooldownMs) return null;
      return `skipped: its circuit breaker is open (it failed ${Math.round(since / 1000)} s ago; fallback_cooldown_ms is ${cooldownMs})`;
    },
    trying(spec) {
      // A model past its cool-down gets this one trial call: the others skip it until it answers.
      if (openedAt.has(spec)) openedAt.set(spec, now());
    },
    failed(spec) {
      failedInTurn.add(spec);
      openedAt.set(spec, now());
    },
    answered(spec) {
      failedInTurn.delete(spec);
      openedAt.delete(spec);
    },
  };
}
