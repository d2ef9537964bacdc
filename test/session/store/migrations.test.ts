// Schema migrations stay additive: a session whose storage was written by the previous migration set (a
// fixture of schema version 3, as the code before the session core's second cut wrote it) opens, migrates,
// keeps its history and runs a turn.
import { env, evictDurableObject, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrate, SESSION_MIGRATIONS } from "../../../src/objects/migrate";
import { AGENT_DEFAULTS, api, events, KEY, submitTurn, waitForTurnEnd } from "../../support/api";
import { upload } from "../../support/files";

const SID = "ses_0123456789abcdef01234567";
const stub = (sid = SID) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));

/** What version 3 stored for a session with one finished turn (orchestration depth still in the metadata). */
function writeVersion3(storage: DurableObjectStorage, sid = SID): void {
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
      session_id: sid,
      thread_id: "thr_legacy",
      ...(turn ? { turn_id: "trn_legacy" } : {}),
      parent_id: null,
      depth: 0,
      payload,
    });
  sql.exec(
    "INSERT INTO session (id, session_id, thread_id, agent, metadata, policy, created_at) VALUES (1, ?, 'thr_legacy', ?, ?, '{}', 1700000000000)",
    sid,
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

  it("reads the files of a session from before the file ledger from R2 once: listed, served, and counted against its quota", async () => {
    const sid = "ses_0123456789abcdef0123feed";
    await runInDurableObject(stub(sid), (_instance, state) => writeVersion3(state.storage, sid));
    // As the file store before the ledger wrote them: the description on the R2 object alone.
    const big = new Uint8Array(3 * 1024 * 1024 - 9 - 8).fill(70);
    const old = [
      { id: "file_0000000000000000000000a1", bytes: new TextEncoder().encode("old notes"), type: "text/plain", name: "old.txt" },
      { id: "file_0000000000000000000000a2", bytes: big, type: "text/csv", name: "" },
    ];
    for (const f of old) {
      await env.BLOBS.put(`sessions/${sid}/files/${f.id}`, f.bytes, {
        httpMetadata: { contentType: f.type },
        customMetadata: { sha256: "x", filename: f.name },
      });
    }
    await evictDurableObject(stub(sid));

    const listed = (await api("GET", `/v1/sessions/${sid}/files`)).body.files;
    expect(listed.map((f: any) => [f.file_id, f.media_type, f.size, f.filename]).sort()).toEqual([
      ["file_0000000000000000000000a1", "text/plain", 9, "old.txt"],
      ["file_0000000000000000000000a2", "text/csv", big.length, null],
    ]);
    const got = await SELF.fetch(`https://runtime.test/v1/sessions/${sid}/files/file_0000000000000000000000a1`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(await got.text()).toBe("old notes");
    // 3 MiB a session (vitest.config.ts): 8 bytes remain.
    expect((await upload(sid, new TextEncoder().encode("9 bytes!!"), "text/plain")).status).toBe(413);
    const fits = await upload(sid, new TextEncoder().encode("8 bytes!"), "text/plain");
    expect(fits.status, JSON.stringify(fits.body)).toBe(201);
  });

  it("moves a stored turn's files and busy settings from its turn.submitted event into its row", async () => {
    const sid = "ses_0123456789abcdef0123beef";
    const files = [{ file_id: "file_0000000000000000000000b1", media_type: "text/plain", filename: "a.txt", size: 3 }];
    const row = await runInDurableObject(stub(sid), (_i, state) => {
      writeVersion3(state.storage, sid);
      migrate(state.storage, SESSION_MIGRATIONS.slice(0, 15));
      const body = JSON.stringify({
        type: "turn.submitted",
        turn_id: "trn_waiting",
        payload: { input: "hi", queued: true, files, on_busy: "inject", debounce_ms: 500 },
      });
      state.storage.sql.exec(
        "INSERT INTO events (sequence, event_id, type, turn_id, body) VALUES (5, 'evt_legacy_5', 'turn.submitted', 'trn_waiting', ?)",
        body,
      );
      state.storage.sql.exec(
        "INSERT INTO turns (turn_id, position, status, input, idempotency_key, created_at) VALUES ('trn_waiting', 2, 'cancelled', 'hi', NULL, 1)",
      );
      migrate(state.storage, SESSION_MIGRATIONS);
      return state.storage.sql.exec("SELECT turn_id, files, on_busy, debounce_ms FROM turns ORDER BY position").toArray();
    });
    expect(row).toEqual([
      { turn_id: "trn_legacy", files: null, on_busy: null, debounce_ms: null },
      { turn_id: "trn_waiting", files: JSON.stringify(files), on_busy: "inject", debounce_ms: 500 },
    ]);
  });

  it("migrates a capability's own tables by its name: each step once, later steps on a later start", async () => {
    const sid = "ses_0123456789abcdef0123cafe";
    const first = { name: "example", steps: ["CREATE TABLE example_a (id TEXT PRIMARY KEY)"] };
    const later = { name: "example", steps: [...first.steps, "ALTER TABLE example_a ADD COLUMN note TEXT"] };
    const read = await runInDurableObject(stub(sid), (_i, state) => {
      migrate(state.storage, SESSION_MIGRATIONS, [first]);
      state.storage.sql.exec("INSERT INTO example_a (id) VALUES ('kept')");
      migrate(state.storage, SESSION_MIGRATIONS, [first]); // applied steps are not run again (the CREATE would fail)
      migrate(state.storage, SESSION_MIGRATIONS, [later]);
      return {
        rows: state.storage.sql.exec("SELECT id, note FROM example_a").toArray(),
        version: state.storage.sql.exec("SELECT name, version FROM capability_schema").toArray(),
      };
    });
    expect(read).toEqual({ rows: [{ id: "kept", note: null }], version: [{ name: "example", version: 2 }] });
  });
});
