// Every JSON answer ends with one newline (so `curl` leaves the prompt on its own line), whichever way the
// route produced it; stored bytes (an artifact) are returned exactly as stored.
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { artifactKey } from "../../src/session/runner/turn-ports";
import { createSession, KEY } from "../support/api";

const get = (path: string, init: RequestInit = {}) =>
  SELF.fetch(`https://runtime.test${path}`, { ...init, headers: { authorization: `Bearer ${KEY}`, ...init.headers } });

describe("JSON answers", () => {
  it("end with a newline: success, errors, not-found, an events page and the OpenAPI document", async () => {
    const sid = await createSession({ name: "newline", model: "demo:fast" });
    const answers = [
      await SELF.fetch("https://runtime.test/healthz"),
      await get("/v1/agents"),
      await get(`/v1/sessions/${sid}/events?after=0`),
      await get("/v1/agents", { headers: { authorization: "Bearer wrong" } }),
      await get("/v1/nowhere"),
      await get("/v1/sessions", { method: "POST", body: "{}", headers: { "content-type": "application/json" } }),
      await SELF.fetch("https://runtime.test/openapi.json"),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 401, 404, 422, 200]);
    for (const res of answers) {
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const text = await res.text();
      expect(text.endsWith("}\n")).toBe(true);
      expect(() => JSON.parse(text)).not.toThrow();
    }
  });

  it("leave an artifact's bytes as stored, even when they are JSON", async () => {
    const sid = await createSession({ name: "artifact-bytes", model: "demo:fast" });
    const id = "art_0123456789abcdef01234567";
    await env.BLOBS.put(artifactKey(sid, id), '{"a":1}', { httpMetadata: { contentType: "application/json" } });
    const res = await get(`/v1/sessions/${sid}/artifacts/${id}`);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe('{"a":1}');
  });
});
