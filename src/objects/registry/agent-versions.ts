// An agent's versions in the registry's SQLite (docs/guides/versions.md): each PUT that changes the
// config stores an immutable version, numbered from 1 per name and never reused (a deleted agent's versions
// stay while sessions of it do, and a new agent of that name goes on from its last number). Configs are compared by a content hash: HMAC-SHA-256
// of the canonical JSON, keyed by a random key of this registry, so a hash read by anyone names a config
// without letting them test guesses of the secrets it holds.
import type { AgentConfig } from "../../protocol/agent-config";
import type { AgentVersion } from "../../protocol/agent-versions";

interface VersionRow {
  name: string;
  version: number;
  config: string;
  content_hash: string | null;
  created_at: number;
  created_by: string | null;
  [key: string]: SqlStorageValue;
}

/** JSON with object keys sorted at every level: equal configs make equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The registry's hash key, made on first use. */
function hashKey(sql: SqlStorage): string {
  const row = sql.exec<{ value: string }>("SELECT value FROM registry_secrets WHERE name = 'content_hash'").toArray()[0];
  if (row) return row.value;
  const value = [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
  sql.exec("INSERT INTO registry_secrets (name, value) VALUES ('content_hash', ?)", value);
  return value;
}

export async function contentHash(sql: SqlStorage, config: AgentConfig): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(hashKey(sql)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(canonicalJson(config))));
  return `sha256:${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Hashes the versions stored before hashes were (the agents a deployment held when it upgraded). */
export async function fillMissingHashes(sql: SqlStorage): Promise<void> {
  const rows = sql.exec<VersionRow>("SELECT * FROM agent_versions WHERE content_hash IS NULL").toArray();
  for (const r of rows) {
    const hash = await contentHash(sql, JSON.parse(r.config) as AgentConfig);
    sql.exec("UPDATE agent_versions SET content_hash = ? WHERE name = ? AND version = ?", hash, r.name, r.version);
  }
}

const toVersion = (r: VersionRow): AgentVersion => ({
  agent: r.name,
  version: r.version,
  content_hash: r.content_hash ?? "",
  created_at: r.created_at,
  created_by: r.created_by,
});

/** The newest version of `name`, if any. */
export function latestVersion(sql: SqlStorage, name: string): (AgentVersion & { config: AgentConfig }) | null {
  const row = sql.exec<VersionRow>("SELECT * FROM agent_versions WHERE name = ? ORDER BY version DESC LIMIT 1", name).toArray()[0];
  return row ? { ...toVersion(row), config: JSON.parse(row.config) as AgentConfig } : null;
}

/**
 * Records `config` as the newest version of its agent unless it equals the newest one (same hash): the version
 * it now runs, and whether it is new.
 */
export function recordVersion(sql: SqlStorage, config: AgentConfig, hash: string, by: string | null, now: number): { version: number; created: boolean } {
  const latest = latestVersion(sql, config.name);
  if (latest && latest.content_hash === hash) return { version: latest.version, created: false };
  const erased = sql.exec<{ last_version: number }>("SELECT last_version FROM erased_agent_versions WHERE name = ?", config.name).toArray()[0];
  const version = Math.max(latest?.version ?? 0, erased?.last_version ?? 0) + 1;
  sql.exec(
    "INSERT INTO agent_versions (name, version, config, content_hash, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)",
    config.name,
    version,
    JSON.stringify(config),
    hash,
    now,
    by,
  );
  return { version, created: true };
}

/** Every version of `name`, newest first (configs not included). */
export function listVersions(sql: SqlStorage, name: string): AgentVersion[] {
  return sql.exec<VersionRow>("SELECT * FROM agent_versions WHERE name = ? ORDER BY version DESC", name).toArray().map(toVersion);
}

export function getVersion(sql: SqlStorage, name: string, version: number): (AgentVersion & { config: AgentConfig }) | null {
  const row = sql.exec<VersionRow>("SELECT * FROM agent_versions WHERE name = ? AND version = ?", name, version).toArray()[0];
  return row ? { ...toVersion(row), config: JSON.parse(row.config) as AgentConfig } : null;
}

/** Erases a deleted agent's versions and their online scores, keeping the last number (the caller found no session of it). */
export function eraseVersions(sql: SqlStorage, name: string): void {
  const last = latestVersion(sql, name)?.version;
  if (last === undefined) return;
  sql.exec("INSERT OR REPLACE INTO erased_agent_versions (name, last_version) VALUES (?, ?)", name, last);
  sql.exec("DELETE FROM agent_versions WHERE name = ?", name);
  sql.exec("DELETE FROM version_scores WHERE agent = ?", name);
}
