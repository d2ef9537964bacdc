// A field that takes one of several shapes (text or items, a given item or a recorded turn, a named window or
// a rolling one) is refused naming what is wrong with it, not with a bare "Invalid input": the field inside
// the shape the value has, or the shapes the field takes.
import { describe, expect, it } from "vitest";
import { api } from "../support/api";

const details = (res: { status: number; body: any }) => {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  return res.body.error?.details ?? res.body.error;
};

describe("a value of a union refused", () => {
  it("says what the field takes when no shape fits", async () => {
    const missing = await api("POST", "/v1/responses", { model: "nobody" });
    expect(missing.body.error).toMatchObject({
      param: "input",
      message: "Validation failed: input: Invalid input: expected string or array, received undefined",
    });
    const number = await api("POST", "/v1/responses", { model: "nobody", input: 5 });
    expect(number.body.error.message).toContain("input: Invalid input: expected string or array, received number");
    const week = { scope: { kind: "subject", id: "union-test" }, limits: { turns: 1 }, window: "week", action: "refuse" };
    expect(details(await api("PUT", "/v1/quotas/union-week", week))).toEqual([
      { path: "window", reason: 'Invalid input: expected "day" or "month" or object, received string' },
    ]);
    expect((await api("GET", "/v1/quotas/union-week")).status).toBe(404);
  });

  it("names the field inside the shape the value has", async () => {
    const put = (item: unknown) => api("PUT", "/v1/datasets/union-items", { items: [{ input: "fine" }, item] });
    expect(details(await put({ input: "x", metadata: "a note" }))).toEqual([{ path: "items.1.metadata", reason: expect.stringContaining("expected record") }]);
    expect(details(await put({ input: "x", from: { session_id: "ses_x", turn_id: "trn_x" } }))).toEqual([
      { path: "items.1.from", reason: "is not a known field" },
    ]);
    expect(details(await put({ expected: "4" }))).toEqual([{ path: "items.1.input", reason: "Invalid input: expected string or array, received undefined" }]);
    expect((await api("GET", "/v1/datasets/union-items")).status).toBe(404);
  });
});
