// The cases of an eval run over recorded traffic (docs/guides/evals.md): completed turns of earlier sessions,
// found through the session index (agent, version) and read from their logs, newest first, each with its
// recorded answer as the expected one. Eval cases' sessions and replayed turns are not traffic and are skipped.
import type { Env } from "../env";
import { sessionEvents } from "../objects/evals/session-reads";
import { type IndexLayout, listAcross } from "../objects/index/index-shards";
import type { DatasetItem } from "../protocol/datasets";
import { ApiError } from "../protocol/errors";
import type { RecordedFilter } from "../protocol/evals";
import { REPLAY_TURN_KEY } from "../protocol/event-shapes";
import { timeParam } from "../protocol/strict-values";

/** Sessions read from the index a page at a time, at most this many pages (the newest sessions first). */
const PAGE = 50;
const MAX_PAGES = 20;
const PATH = "recorded.filter";

function bounds(filter: RecordedFilter): { since: number; until: number } {
  const at = (k: "since" | "until", v: string | number | undefined, fallback: number) => (v === undefined ? fallback : timeParam(`${PATH}.${k}`, String(v)));
  const since = at("since", filter.since, 0);
  const until = at("until", filter.until, Number.MAX_SAFE_INTEGER);
  if (until < since) throw ApiError.validation([{ path: `${PATH}.until`, reason: "is before since" }]);
  return { since, until };
}

/** Up to `filter.limit` recorded turns as eval items; 422 naming the filter when none matches. */
export async function recordedItems(env: Env, layout: IndexLayout, runAgent: string, filter: RecordedFilter): Promise<DatasetItem[]> {
  const { since, until } = bounds(filter);
  const agent = filter.agent ?? runAgent;
  const items: DatasetItem[] = [];
  let before: [number, string] | undefined;
  for (let page = 0; page < MAX_PAGES && items.length < filter.limit; page++) {
    const query = {
      agent,
      metadata: [],
      limit: PAGE,
      active_after: since,
      ...(filter.version ? { agent_version: filter.version } : {}),
      ...(before ? { before } : {}),
    };
    const sessions = await listAcross(env, layout, query);
    for (const s of sessions) {
      if (items.length >= filter.limit) break;
      if (s.metadata.eval_run_id !== undefined || s.created_at > until) continue;
      const log = await sessionEvents(env, s.session_id);
      const answers = new Map(log.flatMap((e) => (e.type === "turn.completed" ? [[e.turn_id, e.payload.output] as const] : [])));
      for (const e of log.toReversed()) {
        if (items.length >= filter.limit) break;
        if (e.type !== "turn.submitted" || !e.turn_id || !answers.has(e.turn_id) || e.payload.idempotency_key === REPLAY_TURN_KEY) continue;
        if (e.timestamp < since || e.timestamp > until) continue;
        items.push({ input: e.payload.input, expected: answers.get(e.turn_id), source: { session_id: s.session_id, turn_id: e.turn_id } });
      }
    }
    const last = sessions.at(-1);
    if (sessions.length < PAGE || !last) break;
    before = [last.created_at, last.session_id];
  }
  if (items.length === 0) {
    const version = filter.version ? ` version ${filter.version}` : "";
    throw ApiError.validation([{ path: PATH, reason: `matches no completed turn of a session of agent "${agent}"${version} in the time given` }]);
  }
  return items;
}
