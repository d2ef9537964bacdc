// Schema migrations stay additive: a session whose storage was written by the previous migration set (a
// fixture of schema version 3, as the code before the session core's second cut wrote it) opens, migrates,
// keeps its history and runs a turn.
import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrate, SESSION_MIGRATIONS } from "../src/durable/migrate";
import { AGENT_DEFAULTS, api, events, submitTurn, waitForTurnEnd } from "./support/api";

const SID = "ses_0123456789abcdef01234567";
const stub = () => env.SESSIONS.get(env.SESSIONS.idFromName(SID));

/** What version 3 stored for a session with one finished turn (orchestration depth still in the metadata). */
function writeVersion3(storage: DurableObjectStorage): void {
  migrate(storage, SESSION_MIGRATIONS.slice(0, 3));
  const sql = storage.sql;
  const agent = { ...AGENT_DEFAULTS, name: "legacy", model: "demo:fast" };
  const metadata = { team: "blue", orchestration_depth: 2 };
  const envelope = (sequence: number, type: string, payload: unknown, turn = true) =>
    JSON.stringify({
      type,
      event_id: `evt_legacy_${sequence}`,
      timestamp: 1_700_000_000_000 + sequence,
      sequence,
      schema_version: 1,
      session_id: SID,
      thread_id: "thr_legacy",
      ...(turn ? { turn_id: "trn_legacy" } : {}),
      parent_id: null,
      depth: 0,
      payload,
    });
  sql.exec(
    "INSERT INTO session (id, session_id, thread_id, agent, metadata, policy, created_at) VALUES (1, ?, 'thr_legacy', ?, ?, '{}', 1700000000000)",
    SID,
    JSON.stringify(agent),
    JSON.stringify(metadata),
  );
  const log = [
    envelope(1, "session.created", { agent: "legacy", model: "demo:fast", policy: {}, metadata }, false),
    envelope(2, "turn.submitted", { input: "remember the word heron", queued: false }),
    envelope(3, "turn.started", { agent: "legacy", model: "demo:fast" }),
    envelope(4, "turn.completed", {
      output: "Noted: heron.",
      stop_reason: "final_answer",
      usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
      cost_usd: null,
    }),
  ];
  for (const [i, body] of log.entries()) {
    const e = JSON.parse(body);
    sql.exec("INSERT INTO events (sequence, event_id, type, turn_id, body) VALUES (?, ?, ?, ?, ?)", i + 1, e.event_id, e.type, e.turn_id ?? null, body);
  }
  sql.exec(
    "INSERT INTO turns (turn_id, position, status, input, idempotency_key, created_at) VALUES ('trn_legacy', 1, 'completed', 'remember the word heron', NULL, 1700000000002)",
  );
  sql.exec("INSERT INTO messages (turn_id, message) VALUES ('trn_legacy', ?)", JSON.stringify({ role: "user", content: "remember the word heron" }));
  sql.exec(
    "INSERT INTO messages (turn_id, message) VALUES ('trn_legacy', ?)",
    JSON.stringify({ role: "assistant", content: [{ type: "text", text: "Noted: heron." }] }),
  );
}

describe("schema migrations", () => {
  it("opens a session written by schema version 3, migrates it, and runs a turn with its history", async () => {
    await runInDurableObject(stub(), (_instance, state) => writeVersion3(state.storage));
    await evictDurableObject(stub());

    const snapshot = await api("GET", `/v1/sessions/${SID}`);
    expect(snapshot.status).toBe(200);
    expect(snapshot.body).toMatchObject({ turn_count: 1, last_sequence: 4, orchestration_depth: 2, metadata: { team: "blue" } });
    const version = await runInDurableObject(
      stub(),
      (_i, state) => state.storage.sql.exec<{ v: number }>("SELECT max(version) AS v FROM schema_version").one().v,
    );
    expect(version).toBe(SESSION_MIGRATIONS.length);

    const { turn_id } = await submitTurn(SID, "what was the word?");
    const log = await waitForTurnEnd(SID, turn_id);
    expect(log.at(-1).type).toBe("turn.completed");
    const all = await events(SID); // the verifier runs over the old and the new events together
    expect(all.map((e) => e.sequence)).toEqual(all.map((_, i) => i + 1));
    // The turn's prompt held the earlier turn: the history survived the migration.
    const history = await runInDurableObject(stub(), (_i, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages").one().n);
    expect(history).toBe(4);
  });
});
