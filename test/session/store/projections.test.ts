// The turns, queue and actions tables and the read model are projections of the log: after a long seeded
// random run of submits, queue operations, approvals, injections, interrupts and restarts, rebuilding them
// from the log alone gives exactly what is stored.
import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RuntimeEvent } from "../../../src/protocol/events";
import type { SessionObject } from "../../../src/session/object";
import { APPROVAL_DEADLINE, project } from "../../../src/session/store/projections";
import { foldAll } from "../../../src/views/read-model";
import { api, createSession, events } from "../../support/api";
import { prng } from "../../support/prng";

const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const TABLES = {
  turns: "SELECT * FROM turns ORDER BY turn_id",
  queue: "SELECT turn_id FROM turns WHERE status = 'queued' ORDER BY position",
  actions: "SELECT * FROM actions ORDER BY action_id",
  deadlines: `SELECT * FROM schedule WHERE kind LIKE '${APPROVAL_DEADLINE}%' ORDER BY kind`,
  usage: "SELECT * FROM usage_days ORDER BY day",
};

/** The stored tables, and the same tables rebuilt from the log alone (in a transaction that is rolled back). */
function storedAndRebuilt(sql: SqlStorage, storage: DurableObjectStorage) {
  const read = () => Object.fromEntries(Object.entries(TABLES).map(([name, q]) => [name, sql.exec(q).toArray()]));
  const stored = read();
  let rebuilt: ReturnType<typeof read> | null = null;
  const log = sql
    .exec<{ body: string }>("SELECT body FROM events ORDER BY sequence")
    .toArray()
    .map((r) => JSON.parse(r.body) as RuntimeEvent);
  try {
    storage.transactionSync(() => {
      sql.exec("DELETE FROM turns");
      sql.exec("DELETE FROM actions");
      sql.exec(`DELETE FROM schedule WHERE kind LIKE '${APPROVAL_DEADLINE}%'`);
      sql.exec("DELETE FROM usage_days");
      // The whole log as one batch: usage added up per day must equal what the commits added one by one.
      project(sql, log);
      rebuilt = read();
      throw new Error("roll back");
    });
  } catch (err) {
    if ((err as Error).message !== "roll back") throw err;
  }
  return { stored, rebuilt: rebuilt!, log };
}

describe("tables and read model as projections of the log", () => {
  for (const seed of [7, 2026]) {
    it(`rebuilds exactly what is stored after a random run (seed ${seed})`, async () => {
      const random = prng(seed);
      const pick = <T>(xs: T[]): T | undefined => xs[Math.floor(random() * xs.length)];
      const sid = await createSession({ name: `proj-${seed}`, model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] });
      const counts: Record<string, number> = {};
      for (let i = 0; i < 80; i++) {
        const thread = (await api("GET", `/v1/sessions/${sid}/thread`)).body;
        const r = random();
        let op: string;
        if (r < 0.3) {
          op = "submit";
          const input = random() < 0.5 ? `what is ${i} + ${i}?` : `hello number ${i}`;
          await api("POST", `/v1/sessions/${sid}/turns`, { input, ...(random() < 0.3 ? { idempotency_key: `key-${Math.floor(random() * 5)}` } : {}) });
        } else if (r < 0.45) {
          op = "decide";
          const action = pick(thread.pending_actions as { action_id: string }[]);
          if (action) await api("POST", `/v1/sessions/${sid}/actions/${action.action_id}`, { decision: random() < 0.6 ? "approve" : "reject" });
        } else if (r < 0.55) {
          op = "inject";
          await api("POST", `/v1/sessions/${sid}/messages`, { content: `also this ${i}` });
        } else if (r < 0.63) {
          op = "interrupt";
          await api("POST", `/v1/sessions/${sid}/interrupt`, {});
        } else if (r < 0.71) {
          op = "remove";
          const queued = pick(thread.queued_turns as string[]);
          if (queued) await api("DELETE", `/v1/sessions/${sid}/queue/${queued}`);
        } else if (r < 0.79) {
          op = "promote";
          const queued = pick(thread.queued_turns as string[]);
          if (queued) await api("POST", `/v1/sessions/${sid}/queue/${queued}/promote`);
        } else if (r < 0.87) {
          op = "restart";
          await evictDurableObject(stub(sid));
        } else {
          op = "wait";
          await sleep(20);
        }
        counts[op] = (counts[op] ?? 0) + 1;
      }
      // Every kind of operation happened (the seeds are chosen so), so the comparison covers them all.
      expect(Object.keys(counts).sort()).toEqual(["decide", "inject", "interrupt", "promote", "remove", "restart", "submit", "wait"]);
      const log = await events(sid); // verifies the log's invariants too
      expect(log.some((e) => e.type === "action.resolved")).toBe(true);
      expect(log.some((e) => e.type === "queue.changed")).toBe(true);

      const { stored, rebuilt, view, folded } = await runInDurableObject(stub(sid), (instance: SessionObject, state) => {
        const tables = storedAndRebuilt(state.storage.sql, state.storage);
        return { ...tables, view: instance.view(), folded: foldAll(tables.log) };
      });
      expect(stored.turns?.length).toBeGreaterThan(5);
      expect(rebuilt).toEqual(stored);
      expect(folded).toEqual(view);
      // 80 random operations with restarts: CPU-bound, so slower when other test files share the cores.
    }, 60_000);
  }
});
