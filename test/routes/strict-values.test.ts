// Numbers and dates a hostile client writes as text, through HTTP: integers in query strings are plain decimal
// digits only (1e2, +5, 0x5 are refused, not read as 100, 5 and 5), and dates are real calendar dates
// (2026-02-30 is refused, not read as March 2), in the index's parameters and a schedule's at; a JSON number out of
// range is one error for its field.
import { describe, expect, it } from "vitest";
import { api, createAgent, createSession, expectOk, expectRefused, submitTurn } from "../support/api";

describe("integers in query strings", () => {
  const LENIENT = ["1e2", "+5", "0x5", "5.0", " 5", "5 ", "010", "-0", "1_000", "Infinity", ""];

  it("are plain decimal digits on every route that reads one: 1e2, +5, 0x5 and the like are 422 naming the parameter", async () => {
    const sid = await createSession({ name: "strict-ints", model: "demo:fast" });
    await submitTurn(sid, "hello");
    const routes = [
      `/v1/sessions/${sid}/events?limit=`,
      `/v1/sessions/${sid}/messages?limit=`,
      `/v1/sessions/${sid}/files?limit=`,
      "/v1/resources/strict-ints-user/memory/search?q=hello&limit=",
      "/v1/sessions?limit=",
    ];
    for (const route of routes) {
      for (const value of LENIENT) await expectRefused("GET", `${route}${encodeURIComponent(value)}`, "limit", undefined, /plain decimal digits/);
      await expectOk("GET", `${route}5`);
    }
    // Event cursors, as before: plain digits only.
    for (const value of ["+1", "1e0", "0x1"]) await expectRefused("GET", `/v1/sessions/${sid}/events?after=${encodeURIComponent(value)}`, "after");
    expect((await expectOk("GET", `/v1/sessions/${sid}/events?limit=1`)).events).toHaveLength(1);
  });
});

describe("dates", () => {
  const year = new Date().getUTCFullYear() + 1;

  it("must be real calendar dates in the index's time parameters: 2026-02-30 is not March 2", async () => {
    for (const [value, why] of [
      ["2026-02-30", /2026-02 has no day 30/],
      ["2025-02-29", /2025-02 has no day 29/],
      ["2026-04-31", /2026-04 has no day 31/],
      ["2026-13-01", /no month 13/],
      ["2026-00-10", /no month 00/],
      ["2026-01-01T24:00:00Z", /not a time of day/],
      ["2026-01-01T10:60Z", /not a time of day/],
      ["2026-01-01T10:00:00+24:00", /not a UTC offset/],
      ["March 2, 2026", /ISO 8601/],
      ["2026-3-2", /ISO 8601/],
    ] as const) {
      await expectRefused("GET", `/v1/usage?from=${encodeURIComponent(value)}`, "from", undefined, why);
      await expectRefused("GET", `/v1/usage?to=${encodeURIComponent(value)}`, "to", undefined, why);
      await expectRefused("GET", `/v1/sessions?created_after=${encodeURIComponent(value)}`, "created_after", undefined, why);
      await expectRefused("GET", `/v1/sessions?active_after=${encodeURIComponent(value)}`, "active_after", undefined, why);
    }
    // Real dates, times with and without an offset, and milliseconds go on working.
    expect(await expectOk("GET", "/v1/usage?from=2024-02-29&to=2024-03-01")).toMatchObject({ from: "2024-02-29", to: "2024-03-01" });
    expect(await expectOk("GET", "/v1/usage?from=2024-02-29T23:30:00-01:00&to=2024-03-01")).toMatchObject({ from: "2024-03-01" });
    for (const value of ["2026-01-01", "2026-01-01T00:00:00Z", "2026-01-01T10:00", "2026-01-01T10:00:00.123+05:30", "1700000000000"]) {
      await expectOk("GET", `/v1/sessions?created_after=${encodeURIComponent(value)}`);
    }
  });

  it("must be real calendar dates in a schedule's at (422 naming at, nothing scheduled)", async () => {
    const sid = await createSession({ name: "strict-dates", model: "demo:fast" });
    for (const [at, why] of [
      [`${year}-02-30T10:00:00Z`, new RegExp(`${year}-02 has no day 30`)],
      [`${year}-13-01T10:00:00Z`, /no month 13/],
      [`${year}-06-31T10:00:00+02:00`, new RegExp(`${year}-06 has no day 31`)],
      [`${year}-06-01T25:00:00Z`, /not a time of day/],
      [`${year}-06-01T10:00:00`, /UTC offset/],
    ] as const) {
      await expectRefused("POST", `/v1/sessions/${sid}/schedules`, "at", { input: "later", at }, why);
    }
    expect((await expectOk("GET", `/v1/sessions/${sid}/schedules`)).schedules).toEqual([]);
    const at = `${year}-03-01T10:00:00+01:00`;
    const created = await expectOk("POST", `/v1/sessions/${sid}/schedules`, { input: "later", at, idempotency_key: "k" });
    expect(created.next_run_at).toBe(Date.UTC(year, 2, 1, 9));
    // The same request again is the same schedule.
    expect((await expectOk("POST", `/v1/sessions/${sid}/schedules`, { input: "later", at, idempotency_key: "k" })).schedule_id).toBe(created.schedule_id);
  });
});

describe("numbers in JSON bodies", () => {
  /** The body with `value` written as JSON text in place of the string "N". */
  const raw = (body: unknown, value: string) => JSON.stringify(body).replaceAll('"N"', value);

  it("out of range (1e400 overflows to Infinity, 2^64 is past the safe integers) are one error per field", async () => {
    await createAgent({ name: "strict-numbers", model: "demo:fast" });
    const quota = { scope: { kind: "agent", id: "strict-numbers" }, limits: { turns: "N" }, window: { rolling_seconds: "N" }, action: "refuse" };
    for (const [value, reason] of [
      ["1e400", "must be a finite number"],
      ["-1e400", "must be a finite number"],
      ["18446744073709551616", /^must be at most /],
    ] as const) {
      const put = await api("PUT", "/v1/quotas/strict-numbers", raw(quota, value));
      expect(put.status, JSON.stringify(put.body)).toBe(422);
      expect(put.body.error.details.map((d: any) => d.path)).toEqual(["limits.turns", "window.rolling_seconds"]);
      await expectRefused(
        "PUT",
        "/v1/agents/strict-numbers-b",
        "max_tokens",
        raw({ name: "strict-numbers-b", model: "demo:fast", max_tokens: "N" }, value),
        reason,
      );
      const resp = await api("POST", "/v1/responses", raw({ model: "strict-numbers", input: "x", max_output_tokens: "N" }, value));
      expect(resp.body.error, value).toMatchObject({ param: "max_output_tokens", message: expect.not.stringContaining(";") });
      const a2a = await api("POST", "/a2a/strict-numbers", raw({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: { pageSize: "N" } }, value));
      expect(a2a.body.error).toMatchObject({ code: -32602, data: [{ path: "params.pageSize", reason: expect.anything() }] });
      expect(a2a.body.error.data).toHaveLength(1);
    }
    expect((await api("GET", "/v1/quotas/strict-numbers")).status).toBe(404);
  });
});
