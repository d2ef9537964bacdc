// Scheduled turns through the public surface: validation, a one-off run across an eviction, an interval that
// missed several slots (it runs once), cron in a time zone, idempotent creation and deletion.
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_EVERY_S } from "../../../src/session/schedules/schedule-times";
import { api, events, submitTurn, waitForEvent, waitForTurnEnd } from "../../support/api";
import { type Step, script, uniqueId } from "../../support/fake-model";

const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));
/** Turns that may wait in a session's queue (src/session/queue/turn-queue.ts). */
const MAX_QUEUED = 20;
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

/** A session whose model answers each turn with "Done." (after `first`, when given). */
async function session(turns = 3, first: Step[] = []): Promise<string> {
  const scriptId = uniqueId("schedules");
  await script(scriptId, [...first, ...Array.from({ length: turns }, () => ({ text: "Done." }))]);
  const res = await api("POST", "/v1/sessions", { agent: { name: "scheduled", model: `openai-compatible:${scriptId}` } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.session_id;
}

const schedule = (sid: string, body: unknown) => api("POST", `/v1/sessions/${sid}/schedules`, body);
const list = async (sid: string) => (await api("GET", `/v1/sessions/${sid}/schedules`)).body.schedules as any[];

/** Moves a schedule's next run into the past, as if the object had been unavailable meanwhile. */
async function rewind(sid: string, scheduleId: string, to: number): Promise<void> {
  await runInDurableObject(stub(sid), async (_i, state) => {
    state.storage.sql.exec("UPDATE schedules SET next_run_at = ? WHERE schedule_id = ?", to, scheduleId);
    state.storage.sql.exec("UPDATE schedule SET due_at = ? WHERE kind = 'schedules'", to);
    await state.storage.setAlarm(to);
  });
}

describe("schedules", () => {
  it("refuses bad times with a 422 naming the field, and creates nothing", async () => {
    const sid = await session();
    const tomorrow = new Date(Math.ceil(Date.now() / 1000) * 1000 + 24 * 3600_000);
    const cases: [unknown, string][] = [
      [{ input: "x", cron: "61 * * * *" }, "cron"],
      [{ input: "x", cron: "0 0 9 * * *" }, "cron"],
      [{ input: "x", cron: "0 9 * * *", timezone: "Mars/Olympus" }, "timezone"],
      [{ input: "x", at: new Date(Date.now() - 60_000).toISOString() }, "at"],
      [{ input: "x", at: "tomorrow" }, "at"],
      [{ input: "x", every_s: 59 }, "every_s"],
      [{ input: "x", every_s: 90.5 }, "every_s"],
      [{ input: "x", every_s: 60, timezone: "UTC" }, "timezone"],
      [{ input: "x", every_s: 60, cron: "* * * * *" }, "cron"],
      [{ input: "x" }, "at"],
      [{ input: "", every_s: 60 }, "input"],
      // Beyond the bounds: every run must be a time a Date holds, and a time must say its offset.
      [{ input: "x", every_s: 1e308 }, "every_s"],
      [{ input: "x", every_s: 9007199254740992 }, "every_s"],
      [{ input: "x", every_s: MAX_EVERY_S + 1 }, "every_s"],
      [{ input: "x", at: tomorrow.toISOString().slice(0, 19) }, "at"],
      [{ input: "x", at: tomorrow.toISOString().slice(0, 10) }, "at"],
      [{ input: "x", at: "+275760-09-13T00:00:00.000Z" }, "at"],
      [{ input: "x", at: new Date(Date.now() + 11 * 365 * 24 * 3600_000).toISOString() }, "at"],
    ];
    for (const [body, field] of cases) {
      const res = await schedule(sid, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.details.map((d: any) => d.path)).toContain(field);
    }
    expect(await list(sid)).toEqual([]);
    expect((await events(sid)).map((e) => e.type)).toEqual(["session.created"]);
    // The bounds themselves are accepted.
    const longest = await schedule(sid, { input: "x", every_s: MAX_EVERY_S });
    expect(longest.status).toBe(201);
    expect(longest.body.next_run_at).toBe(longest.body.created_at + MAX_EVERY_S * 1000);
    const inTokyo = `${new Date(tomorrow.getTime() + 9 * 3600_000).toISOString().slice(0, 19)}+09:00`;
    const offset = await schedule(sid, { input: "x", at: inTokyo });
    expect(offset.status).toBe(201);
    expect(offset.body.at).toBe(tomorrow.getTime());
  });

  it("runs a one-off schedule at its time across an eviction, as a turn with its source, then removes it", async () => {
    const sid = await session();
    const at = Date.now() + 1500;
    const created = await schedule(sid, { input: "follow up", at: new Date(at).toISOString() });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const { schedule_id } = created.body;
    expect(created.body).toMatchObject({ input: "follow up", at, next_run_at: at });
    expect(await list(sid)).toEqual([created.body]);

    await evictDurableObject(stub(sid));
    await sleepUntil(at + 50);
    // The alarm may already have fired on its own; running it again must not submit the turn twice.
    await runDurableObjectAlarm(stub(sid));

    const submitted = await waitForEvent(sid, (e) => e.type === "turn.submitted");
    expect(submitted.payload).toMatchObject({ input: "follow up", source: { kind: "schedule", schedule_id } });
    const log = await waitForTurnEnd(sid, submitted.turn_id);
    expect(log.find((e) => e.turn_id === submitted.turn_id && e.type === "turn.completed")).toBeDefined();
    const fired = log.filter((e) => e.type === "schedule.fired");
    expect(fired).toHaveLength(1);
    expect(fired[0].payload).toMatchObject({ schedule_id, due_at: at, turn_id: submitted.turn_id, next_run_at: null });
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    expect(await list(sid)).toEqual([]);
  });

  it("runs an interval that missed five slots once, keeping its phase", async () => {
    const sid = await session();
    const created = await schedule(sid, { input: "check in", every_s: 60 });
    expect(created.status).toBe(201);
    const { schedule_id, created_at, next_run_at } = created.body;
    expect(next_run_at).toBe(created_at + 60_000);

    const due = Date.now() - 5 * 60_000 - 1000;
    await rewind(sid, schedule_id, due);
    await evictDurableObject(stub(sid));
    await runDurableObjectAlarm(stub(sid));
    await runDurableObjectAlarm(stub(sid)); // nothing is due any more

    const fired = await waitForEvent(sid, (e) => e.type === "schedule.fired");
    await waitForTurnEnd(sid, fired.payload.turn_id);
    const log = await events(sid);
    expect(log.filter((e) => e.type === "schedule.fired")).toHaveLength(1);
    expect(log.filter((e) => e.type === "turn.submitted").map((e) => e.payload.source)).toEqual([{ kind: "schedule", schedule_id }]);
    const next = fired.payload.next_run_at;
    expect(fired.payload.due_at).toBe(due);
    expect(next).toBeGreaterThan(fired.timestamp);
    expect(next - fired.timestamp).toBeLessThanOrEqual(60_000);
    expect((next - due) % 60_000).toBe(0);
    expect((await list(sid))[0]).toMatchObject({ schedule_id, every_s: 60, next_run_at: next });
  });

  it("records a run the queue refused in schedule.fired, and keeps the schedule", async () => {
    const sid = await session(MAX_QUEUED, [{ hang: true }]);
    for (let i = 0; i <= MAX_QUEUED; i++) await submitTurn(sid, `turn ${i}`);
    const created = await schedule(sid, { input: "check in", every_s: 60 });
    await rewind(sid, created.body.schedule_id, Date.now() - 1000);
    await runDurableObjectAlarm(stub(sid));
    const fired = await waitForEvent(sid, (e) => e.type === "schedule.fired");
    expect(fired.payload).toMatchObject({ schedule_id: created.body.schedule_id, turn_id: null, error: { code: "rate_limited" } });
    expect(fired.payload.next_run_at).toBeGreaterThan(fired.timestamp);
    expect((await events(sid)).filter((e) => e.type === "turn.submitted")).toHaveLength(MAX_QUEUED + 1);
    expect(await list(sid)).toHaveLength(1);
    expect((await api("POST", `/v1/sessions/${sid}/interrupt`, {})).status).toBe(200); // the queued turns then run out
  });

  it("reads cron in its time zone; deleting a schedule stops it", async () => {
    const sid = await session();
    const created = await schedule(sid, { input: "morning report", cron: "30 9 * * *", timezone: "Asia/Tokyo" });
    expect(created.status).toBe(201);
    const next = new Date(created.body.next_run_at);
    // 09:30 in Tokyo (UTC+9, no daylight saving) is 00:30 UTC, within the next day.
    expect([next.getUTCHours(), next.getUTCMinutes(), next.getUTCSeconds()]).toEqual([0, 30, 0]);
    expect(created.body.next_run_at - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
    expect(created.body).toMatchObject({ cron: "30 9 * * *", timezone: "Asia/Tokyo" });

    const { schedule_id } = created.body;
    expect((await api("DELETE", `/v1/sessions/${sid}/schedules/${schedule_id}`)).status).toBe(200);
    expect((await api("DELETE", `/v1/sessions/${sid}/schedules/${schedule_id}`)).status).toBe(404);
    // The alarm only moves earlier: the schedule's fires once, finds nothing due, and is not set again.
    expect(await runDurableObjectAlarm(stub(sid))).toBe(true);
    expect(await runDurableObjectAlarm(stub(sid))).toBe(false);
    expect(await list(sid)).toEqual([]);
    const log = await events(sid);
    expect(log.map((e) => e.type)).toEqual(["session.created", "schedule.created", "schedule.deleted"]);
    expect(log[1].payload).toMatchObject({ schedule_id, cron: "30 9 * * *", timezone: "Asia/Tokyo", next_run_at: created.body.next_run_at });
    expect(log[2].payload).toEqual({ schedule_id });
  });

  it("is idempotent by key: the same body returns the same schedule, another body is a conflict", async () => {
    const sid = await session();
    const body = { input: "weekly", cron: "0 8 * * 1", idempotency_key: "weekly-1" };
    const first = await schedule(sid, body);
    const again = await schedule(sid, body);
    expect(first.status).toBe(201);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
    const other = await schedule(sid, { ...body, cron: "0 9 * * 1" });
    expect(other.status).toBe(409);
    expect(await list(sid)).toHaveLength(1);
    expect((await api("GET", "/v1/sessions/ses_000000000000000000000000/schedules")).status).toBe(404);
  });

  it("holds at most 100 schedules per session: one more is 409 and changes nothing", async () => {
    const sid = await session();
    for (let i = 0; i < 100; i++) expect((await schedule(sid, { input: `run ${i}`, every_s: 3600 })).status).toBe(201);
    const before = (await events(sid)).length;
    const over = await schedule(sid, { input: "one more", every_s: 3600 });
    expect(over.status).toBe(409);
    expect(over.body.error.message).toContain("100 schedules");
    expect(await list(sid)).toHaveLength(100);
    expect(await events(sid)).toHaveLength(before);
  });
});
