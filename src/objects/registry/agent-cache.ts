// Agent configs as request paths read them (session and chat creation, forks, tokens, handoffs, sub-agents):
// from a cache in this isolate, at most AGENT_CACHE_SECONDS old (default 5), so the one registry object is
// read once per config per isolate per period instead of once per request. A PUT or DELETE through this
// isolate forgets the entry at once; other isolates see the change within the period. A session keeps the
// config it was created with, so a stale read affects only sessions created within those seconds.
import type { Env } from "../../env";
import type { AgentConfig } from "../../protocol/agent-config";
import type { AgentRouting } from "../../protocol/agent-versions";
import { versionsOf } from "./agent-versions-rpc";
import { registry } from "./registry-object";

const DEFAULT_SECONDS = 5;
/** An agent's config now, with its newest version, labels and traffic. */
export type CurrentAgent = { config: AgentConfig; routing: AgentRouting };
/** One read per name at a time: concurrent misses share it. A name that is not registered is not kept. */
const cache = new Map<string, { at: number; config: Promise<CurrentAgent | null> }>();
/** Versions never change: kept without a period, the most recently stored VERSIONS_KEPT of them. */
const versions = new Map<string, Promise<AgentConfig | null>>();
const VERSIONS_KEPT = 200;

function ttlMs(env: Pick<Env, "AGENT_CACHE_SECONDS">): number {
  const seconds = Number(env.AGENT_CACHE_SECONDS ?? DEFAULT_SECONDS);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : DEFAULT_SECONDS * 1000;
}

export async function agentConfig(env: Pick<Env, "REGISTRY" | "AGENT_CACHE_SECONDS">, name: string): Promise<AgentConfig | null> {
  return (await currentAgent(env, name))?.config ?? null;
}

/** Version `version` of agent `name` (null: no such version). */
export async function agentVersion(env: Pick<Env, "REGISTRY">, name: string, version: number): Promise<AgentConfig | null> {
  const key = `${name}@${version}`;
  const hit = versions.get(key);
  if (hit) return hit;
  const read = versionsOf(registry(env))
    .get(name, version)
    .then((v) => (v ? (v.config as AgentConfig) : null));
  versions.set(key, read);
  if (versions.size > VERSIONS_KEPT) versions.delete(versions.keys().next().value!);
  try {
    const config = await read;
    if (!config) versions.delete(key);
    return config;
  } catch (err) {
    versions.delete(key);
    throw err;
  }
}

export async function currentAgent(env: Pick<Env, "REGISTRY" | "AGENT_CACHE_SECONDS">, name: string): Promise<CurrentAgent | null> {
  const now = Date.now();
  const hit = cache.get(name);
  if (hit && now - hit.at < ttlMs(env)) return hit.config;
  const entry = { at: now, config: registry(env).current(name) as Promise<CurrentAgent | null> };
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
