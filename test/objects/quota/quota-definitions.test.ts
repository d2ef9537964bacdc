// Quota definitions through HTTP: PUT, GET, list, DELETE, and bad input refused with 422 naming the field,
// nothing stored.
import { describe, expect, it } from "vitest";
import { api, apiAs, expectRefused } from "../../support/api";

/** The id of the test deployment's admin key ("test-key"), as the runtime names keys: key_ and 16 hex of its SHA-256. */
async function keyId(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return `key_${[...digest.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const SPEC = { scope: { kind: "subject" }, limits: { usd: 5, turns: 100 }, window: "day", action: "refuse", warn_at: [0.8] };

describe("quota definitions", () => {
  it("are created, replaced, listed, read with their usage and deleted", async () => {
    const created = await api("PUT", "/v1/quotas/daily-spend", SPEC);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: "daily-spend", ...SPEC });
    const replaced = await api("PUT", "/v1/quotas/daily-spend", { ...SPEC, limits: { usd: 10 } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.limits).toEqual({ usd: 10 });
    expect(replaced.body.created_at).toBe(created.body.created_at);
    const listed = await api("GET", "/v1/quotas");
    expect(listed.body.quotas.map((q: { id: string }) => q.id)).toContain("daily-spend");

    // A scope without id has a limit for each subject: the query names whose usage to read.
    const bare = await api("GET", "/v1/quotas/daily-spend");
    expect(bare.body.usage).toBeUndefined();
    const alice = await api("GET", "/v1/quotas/daily-spend?subject=alice");
    expect(alice.status).toBe(200);
    const day = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    expect(alice.body.usage).toEqual([{ subject: "alice", window_start: day, window_end: day + 86_400_000, used: { usd: 0 }, remaining: { usd: 10 } }]);

    expect((await api("DELETE", "/v1/quotas/daily-spend")).body).toEqual({ deleted: true, id: "daily-spend" });
    expect((await api("GET", "/v1/quotas/daily-spend")).status).toBe(404);
    expect((await api("DELETE", "/v1/quotas/daily-spend")).status).toBe(404);
  });

  it("name an existing key in a key scope, and only admins write them", async () => {
    const id = await keyId("test-key");
    const res = await api("PUT", "/v1/quotas/admin-key", {
      scope: { kind: "key", id },
      limits: { concurrent_turns: 3 },
      window: { rolling_seconds: 3600 },
      action: "pause",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const read = await api("GET", "/v1/quotas/admin-key");
    expect(read.body.usage[0]).toMatchObject({ subject: id, used: { concurrent_turns: 0 }, remaining: { concurrent_turns: 3 } });
    expect((await apiAs("PUT", "/v1/quotas/by-operator", "operator-key", SPEC)).status).toBe(403);
    expect((await apiAs("GET", "/v1/quotas", "read-key")).status).toBe(200);
    // It holds every turn of the test key: it goes, so that other files' turns are not held to it.
    expect((await api("DELETE", "/v1/quotas/admin-key")).status).toBe(200);
  });

  it("refuse bad input with 422 naming the field, storing nothing", async () => {
    const bad: [string, Record<string, unknown>, RegExp][] = [
      ["limits.usd", { ...SPEC, limits: { usd: -1 } }, /must not be negative/],
      ["limits.usd", { ...SPEC, limits: { usd: 1e12 } }, /at most/],
      ["limits.turns", { ...SPEC, limits: { turns: 1.5 } }, /whole number/],
      ["limits", { ...SPEC, limits: {} }, /at least one limit/],
      ["scope.kind", { ...SPEC, scope: { kind: "tenant" } }, /deployment/],
      ["scope.id", { ...SPEC, scope: { kind: "deployment", id: "x" } }, /no id/],
      ["scope.id", { ...SPEC, scope: { kind: "key", id: "key_0000000000000000" } }, /no API key/],
      ["scope.id", { ...SPEC, scope: { kind: "key", id: "test-key" } }, /key id/],
      ["window.rolling_seconds", { ...SPEC, window: { rolling_seconds: 59 } }, /at least 60/],
      ["window", { ...SPEC, window: "week" }, /./],
      ["action", { ...SPEC, action: "warn" }, /./],
      ["warn_at.0", { ...SPEC, warn_at: [1.5] }, /below 1/],
      ["warn_at.1", { ...SPEC, warn_at: [0.5, 0.5] }, /0\.5 is already at warn_at\.0/],
      ["warn_at.2", { ...SPEC, warn_at: [0.8, 0.5, 0.8] }, /0\.8 is already at warn_at\.0/],
    ];
    for (const [field, body, reason] of bad) await expectRefused("PUT", "/v1/quotas/bad", field, body, reason);
    expect((await api("GET", "/v1/quotas/bad")).status).toBe(404);
  });
});
