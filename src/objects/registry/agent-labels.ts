// An agent's labels (names pointing at versions, each move recorded with who made it) and its traffic (how
// new sessions opened by the agent's name split between labels), in the registry's SQLite.
import type { AgentLabel, AgentRouting, AgentTraffic, TrafficRoute } from "../../protocol/agent-versions";
import type { FieldIssue } from "../../protocol/errors";
import { getVersion, latestVersion } from "./agent-versions";

interface LabelRow {
  label: string;
  version: number;
  moved_at: number;
  moved_by: string | null;
  [key: string]: SqlStorageValue;
}

export function listLabels(sql: SqlStorage, name: string): AgentLabel[] {
  const moves = sql
    .exec<LabelRow & { from_version: number | null }>(
      "SELECT label, version, from_version, moved_at, moved_by FROM agent_label_moves WHERE name = ? ORDER BY moved_at, rowid",
      name,
    )
    .toArray();
  return sql
    .exec<LabelRow>("SELECT label, version, moved_at, moved_by FROM agent_labels WHERE name = ? ORDER BY label", name)
    .toArray()
    .map((l) => ({
      ...l,
      history: moves.filter((m) => m.label === l.label).map(({ version, from_version, moved_at, moved_by }) => ({ version, from_version, moved_at, moved_by })),
    }));
}

/** Points `label` at `version` (which must exist); the move is recorded. Issues name the field when it cannot. */
export function moveLabel(sql: SqlStorage, name: string, label: string, version: number, by: string | null, now: number): FieldIssue[] {
  if (!getVersion(sql, name, version)) return [{ path: "version", reason: `agent '${name}' has no version ${version}` }];
  const from = sql.exec<{ version: number }>("SELECT version FROM agent_labels WHERE name = ? AND label = ?", name, label).toArray()[0]?.version ?? null;
  sql.exec(
    `INSERT INTO agent_labels (name, label, version, moved_at, moved_by) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (name, label) DO UPDATE SET version = excluded.version, moved_at = excluded.moved_at, moved_by = excluded.moved_by`,
    name,
    label,
    version,
    now,
    by,
  );
  sql.exec(
    "INSERT INTO agent_label_moves (name, label, version, from_version, moved_at, moved_by) VALUES (?, ?, ?, ?, ?, ?)",
    name,
    label,
    version,
    from,
    now,
    by,
  );
  return [];
}

export function getTraffic(sql: SqlStorage, name: string): AgentTraffic {
  const row = sql
    .exec<{ routes: string; updated_at: number; updated_by: string | null }>("SELECT routes, updated_at, updated_by FROM agent_traffic WHERE name = ?", name)
    .toArray()[0];
  return row
    ? { agent: name, routes: JSON.parse(row.routes) as TrafficRoute[], updated_at: row.updated_at, updated_by: row.updated_by }
    : { agent: name, routes: [], updated_at: null, updated_by: null };
}

/** Stores the routes when every label exists, no label repeats and the weights sum to more than 0 (or there are none). */
export function setTraffic(sql: SqlStorage, name: string, routes: TrafficRoute[], by: string | null, now: number): FieldIssue[] {
  const labels = new Set(
    sql
      .exec<{ label: string }>("SELECT label FROM agent_labels WHERE name = ?", name)
      .toArray()
      .map((r) => r.label),
  );
  const issues: FieldIssue[] = [];
  routes.forEach((r, i) => {
    if (!labels.has(r.label)) issues.push({ path: `routes.${i}.label`, reason: `agent '${name}' has no label '${r.label}'` });
    if (routes.findIndex((o) => o.label === r.label) !== i) issues.push({ path: `routes.${i}.label`, reason: `label "${r.label}" appears twice` });
  });
  if (routes.length > 0 && routes.every((r) => r.weight === 0)) issues.push({ path: "routes", reason: "the weights sum to 0: no session could be routed" });
  if (issues.length > 0) return issues;
  if (routes.length === 0) sql.exec("DELETE FROM agent_traffic WHERE name = ?", name);
  else
    sql.exec(
      `INSERT INTO agent_traffic (name, routes, updated_at, updated_by) VALUES (?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET routes = excluded.routes, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
      name,
      JSON.stringify(routes),
      now,
      by,
    );
  return [];
}

/** What opening a session by the agent's name needs: its newest version, its labels and its routes. */
export function routing(sql: SqlStorage, name: string): AgentRouting | null {
  const latest = latestVersion(sql, name);
  if (!latest) return null;
  const labels = Object.fromEntries(
    sql
      .exec<{ label: string; version: number }>("SELECT label, version FROM agent_labels WHERE name = ?", name)
      .toArray()
      .map((r) => [r.label, r.version]),
  );
  return { version: latest.version, labels, routes: getTraffic(sql, name).routes };
}

/** A deleted agent's labels and traffic go (its versions stay, each readable by number). */
export function dropRouting(sql: SqlStorage, name: string): void {
  sql.exec("DELETE FROM agent_labels WHERE name = ?", name);
  sql.exec("DELETE FROM agent_traffic WHERE name = ?", name);
}
