// The session index, sharded (docs/scale.md): INDEX_SHARDS objects (default 16) named `index:<count>:<i>`, a
// session's row, usage days and tombstone in shard hash(session id) mod count. Lists and usage ask every shard
// in parallel and merge (src/objects/index/index-merge.ts). The count is part of the names, so a deployment that
// changes it starts a new, empty set: see docs/scale.md for moving the rows over.
import type { Env } from "../../env";
import type { SessionListQuery, SessionSummary, UsageQuery, UsageRow } from "../../protocol/session-list";
import { mergePages, mergeUsage } from "./index-merge";

export const DEFAULT_INDEX_SHARDS = 16;
const MAX_INDEX_SHARDS = 256;
/** Test hook (TEST_HOOKS=1): `<prefix>:<count>` reads another shard set for one request. */
export const TEST_LAYOUT_HEADER = "x-test-index-layout";

export interface IndexLayout {
  prefix: string;
  shards: number;
}

type IndexEnv = Pick<Env, "INDEX" | "INDEX_SHARDS" | "TEST_HOOKS">;

function shardCount(raw: string, what: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_INDEX_SHARDS) throw new Error(`${what} must be an integer from 1 to ${MAX_INDEX_SHARDS} (got "${raw}")`);
  return n;
}

/** The deployment's shard set. */
export function indexLayout(env: Pick<Env, "INDEX_SHARDS">): IndexLayout {
  const raw = env.INDEX_SHARDS;
  return { prefix: "index", shards: raw ? shardCount(raw, "INDEX_SHARDS") : DEFAULT_INDEX_SHARDS };
}

/** The shard set a request reads: the deployment's, or with test hooks on, the one its header names. */
export function requestLayout(env: IndexEnv, header: string | undefined): IndexLayout {
  if (env.TEST_HOOKS !== "1" || header === undefined) return indexLayout(env);
  const [prefix = "", count = ""] = header.split(":");
  if (!/^[a-z0-9-]{1,32}$/.test(prefix)) throw new Error(`${TEST_LAYOUT_HEADER}: bad prefix "${prefix}"`);
  return { prefix, shards: shardCount(count, TEST_LAYOUT_HEADER) };
}

/** FNV-1a of the id, mod the count: stable across isolates and deployments of the same count. */
export function shardOf(sessionId: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < sessionId.length; i++) h = Math.imul(h ^ sessionId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % shards;
}

export function shardAt(env: IndexEnv, layout: IndexLayout, i: number) {
  return env.INDEX.get(env.INDEX.idFromName(`${layout.prefix}:${layout.shards}:${i}`));
}

/** The shard holding the session's row, usage and tombstone. */
export function indexShard(env: IndexEnv, sessionId: string, layout = indexLayout(env)) {
  return shardAt(env, layout, shardOf(sessionId, layout.shards));
}

function everyShard(env: IndexEnv, layout: IndexLayout) {
  return Array.from({ length: layout.shards }, (_, i) => shardAt(env, layout, i));
}

/** One page (`query.limit` rows) of the whole index: every shard's page for the same query, merged. */
export async function listAcross(env: IndexEnv, layout: IndexLayout, query: SessionListQuery): Promise<SessionSummary[]> {
  // The RPC's serialization types lose the metadata record; the rows are SessionSummary as stored.
  const pages = (await Promise.all(everyShard(env, layout).map((s) => s.listSessions(query)))) as unknown as SessionSummary[][];
  return mergePages(pages, query.limit);
}

/** Whether any session in the index runs or was opened with agent `name`. */
export async function agentInUse(env: IndexEnv, name: string): Promise<boolean> {
  return (await Promise.all(everyShard(env, indexLayout(env)).map((s) => s.hasAgentSessions(name)))).some(Boolean);
}

/** The bytes the matching sessions' files take now, over every shard. */
export async function storedAcross(env: IndexEnv, layout: IndexLayout, query: Pick<UsageQuery, "agent" | "owner">): Promise<number> {
  return (await Promise.all(everyShard(env, layout).map((s) => s.storedBytes(query)))).reduce((a, b) => a + b, 0);
}

export async function usageAcross(env: IndexEnv, layout: IndexLayout, query: UsageQuery): Promise<UsageRow[]> {
  return mergeUsage(await Promise.all(everyShard(env, layout).map((s) => s.usage(query))));
}
