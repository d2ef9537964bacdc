// Quota definitions as sessions read them before each turn and model call: the whole (short) list from a
// cache in this isolate, at most QUOTA_CACHE_SECONDS old (default 5), so the one registry object is read once
// per isolate per period, never per call. A PUT or DELETE through this isolate forgets the list at once;
// other isolates see the change within the period.
import type { Env } from "../../env";
import type { QuotaDefinition } from "../../protocol/quotas";
import { registry } from "./registry-object";

const DEFAULT_SECONDS = 5;
/** Concurrent misses share one read; a failed read is not kept. */
let cached: { at: number; list: Promise<QuotaDefinition[]> } | null = null;

function ttlMs(env: Pick<Env, "QUOTA_CACHE_SECONDS">): number {
  const seconds = Number(env.QUOTA_CACHE_SECONDS ?? DEFAULT_SECONDS);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : DEFAULT_SECONDS * 1000;
}

export async function quotaDefinitions(env: Pick<Env, "REGISTRY" | "QUOTA_CACHE_SECONDS">): Promise<QuotaDefinition[]> {
  const now = Date.now();
  if (cached && now - cached.at < ttlMs(env)) return cached.list;
  const entry = { at: now, list: registry(env).quotas() as Promise<QuotaDefinition[]> };
  cached = entry;
  try {
    return await entry.list;
  } catch (err) {
    if (cached === entry) cached = null;
    throw err;
  }
}

/** A quota changed (PUT) or went (DELETE) through this isolate. */
export function forgetQuotas(): void {
  cached = null;
}
