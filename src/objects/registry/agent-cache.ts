// Agent configs as request paths read them (session and chat creation, forks, tokens, handoffs, sub-agents):
// from a cache in this isolate, at most AGENT_CACHE_SECONDS old (default 5), so the one registry object is
// read once per config per isolate per period instead of once per request. A PUT or DELETE through this
// isolate forgets the entry at once; other isolates see the change within the period. A session keeps the
// config it was created with, so a stale read affects only sessions created within those seconds.
import type { Env } from "../../env";
import type { AgentConfig } from "../../protocol/agent-config";
import { registry } from "./registry-object";

const DEFAULT_SECONDS = 5;
/** One read per name at a time: concurrent misses share it. A name that is not registered is not kept. */
const cache = new Map<string, { at: number; config: Promise<AgentConfig | null> }>();

function ttlMs(env: Pick<Env, "AGENT_CACHE_SECONDS">): number {
  const seconds = Number(env.AGENT_CACHE_SECONDS ?? DEFAULT_SECONDS);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : DEFAULT_SECONDS * 1000;
}

export async function agentConfig(env: Pick<Env, "REGISTRY" | "AGENT_CACHE_SECONDS">, name: string): Promise<AgentConfig | null> {
  const now = Date.now();
  const hit = cache.get(name);
  if (hit && now - hit.at < ttlMs(env)) return hit.config;
  const entry = { at: now, config: registry(env).get(name) as Promise<AgentConfig | null> };
  cache.set(name, entry);
  try {
    const config = await entry.config;
    if (!config && cache.get(name) === entry) cache.delete(name);
    return config;
  } catch (err) {
    if (cache.get(name) === entry) cache.delete(name);
    throw err;
  }
}

/** The config changed (PUT) or went (DELETE) through this isolate. */
export function forgetAgent(name: string): void {
  cache.delete(name);
}
