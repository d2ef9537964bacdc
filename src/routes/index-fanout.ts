// The deployment's sessions at scale: GET /v1/sessions (the index, filtered, newest first, keyset pages)
// and GET /v1/usage (totals per agent, owner or day). Both read every shard of the index the session objects
// keep current (src/objects/index/index-shards.ts), in parallel, and merge.
import type { Context } from "hono";
import { listAcross, requestLayout, storedAcross, TEST_LAYOUT_HEADER, usageAcross } from "../objects/index/index-shards";
import { ApiError, type FieldIssue } from "../protocol/errors";
import { sessions as ops, usage } from "../protocol/operations";
import type { SessionListQuery, UsageQuery } from "../protocol/session-list";
import { intParam, timeParam } from "../protocol/strict-values";
import { type AppEnv, router } from "./http";
import { decodeCursor, encodeCursor } from "./keyset-cursor";
import { route } from "./operation-route";

const LIST_PARAMS = new Set(["agent", "agent_version", "status", "owner", "created_after", "active_after", "limit", "cursor"]);
const USAGE_PARAMS = new Set(["from", "to", "group_by", "agent", "owner"]);
const METADATA_KEY = /^[A-Za-z0-9_-]{1,64}$/;
const DAY_MS = 24 * 3600 * 1000;

/** The query string, refusing any parameter the route does not know (422 naming it). */
function queryOf(c: Context<AppEnv>, known: Set<string>, allowMetadata: boolean): { params: Map<string, string>; metadata: [string, string][] } {
  const params = new Map<string, string>();
  const metadata: [string, string][] = [];
  const issues: FieldIssue[] = [];
  for (const [name, values] of Object.entries(c.req.queries())) {
    const value = values.at(-1) ?? "";
    if (allowMetadata && name.startsWith("metadata.")) {
      const key = name.slice("metadata.".length);
      if (METADATA_KEY.test(key)) metadata.push([key, value]);
      else issues.push({ path: name, reason: "the metadata key must be 1-64 letters, digits, _ or -" });
    } else if (known.has(name)) params.set(name, value);
    else issues.push({ path: name, reason: `is not a parameter of this route (known: ${[...known].join(", ")}${allowMetadata ? ", metadata.<key>" : ""})` });
  }
  if (issues.length > 0) throw ApiError.validation(issues);
  return { params, metadata };
}

/** The UTC day (YYYY-MM-DD) of a time parameter; a year outside 0000-9999 has no such form. */
function dayParam(name: string, raw: string): string {
  const iso = new Date(timeParam(name, raw)).toISOString();
  if (!/^\d{4}-/.test(iso)) throw ApiError.validation([{ path: name, reason: "must be a time in the years 0000 to 9999" }]);
  return iso.slice(0, 10);
}

export const sessionIndex = router()
  .openapi(route(ops.listSessions), async (c) => {
    const { params, metadata } = queryOf(c, LIST_PARAMS, true);
    const limit = intParam("limit", params.get("limit"), { min: 1, max: 100 }, 20);
    // agent, status and owner: as the declaration validated them (a status outside the enum is 422).
    const { agent, status, owner } = c.req.valid("query");
    const query: SessionListQuery = { metadata, limit: limit + 1, agent, status, owner };
    const version = params.get("agent_version");
    if (version !== undefined) query.agent_version = intParam("agent_version", version, { min: 1, max: 999_999_999 }, 1);
    for (const k of ["created_after", "active_after"] as const) {
      const v = params.get(k);
      if (v !== undefined) query[k] = timeParam(k, v);
    }
    const cursor = params.get("cursor");
    if (cursor !== undefined) query.before = decodeCursor(cursor);
    const principal = c.get("principal");
    if (principal.kind === "token") {
      if ((query.owner !== undefined && query.owner !== principal.subject) || (query.agent !== undefined && query.agent !== principal.agent)) {
        throw new ApiError("forbidden", "This token lists its own subject's sessions of its agent only");
      }
      // Its agent is the one its subject opened the session with: after a handoff the session runs another.
      query.owner = principal.subject;
      delete query.agent;
      query.opened_agent = principal.agent ?? undefined;
    }
    // The RPC's serialization types lose the metadata record; the rows are SessionSummary as stored.
    const rows = await listAcross(c.env, requestLayout(c.env, c.req.header(TEST_LAYOUT_HEADER)), query);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return c.json({ sessions: page, next_cursor: rows.length > limit && last ? encodeCursor(last.created_at, last.session_id) : null }, 200);
  })
  .openapi(route(usage.getUsage), async (c) => {
    const { params } = queryOf(c, USAGE_PARAMS, false);
    const day = (name: string, fallback: number) => {
      const raw = params.get(name);
      return raw === undefined ? new Date(fallback).toISOString().slice(0, 10) : dayParam(name, raw);
    };
    const now = Date.now();
    const from = day("from", now - 6 * DAY_MS);
    const to = day("to", now);
    if (from > to) throw ApiError.validation([{ path: "from", reason: `must not be after to (${from} > ${to})` }]);
    const { group_by = "agent", agent, owner } = c.req.valid("query");
    const query: UsageQuery = { from, to, group_by, agent, owner };
    const layout = requestLayout(c.env, c.req.header(TEST_LAYOUT_HEADER));
    const [rows, stored_bytes] = await Promise.all([usageAcross(c.env, layout, query), storedAcross(c.env, layout, query)]);
    return c.json({ from, to, group_by: query.group_by, rows, stored_bytes }, 200);
  });
