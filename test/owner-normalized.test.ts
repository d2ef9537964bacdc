// Who owns a session is one person however a token's subject is written: ownership, listing and the memory a
// token reaches compare the subject as a quorum counts it (normalized: case, full-width forms, runs of spaces
// and invisible characters folded), never as written, and a different person stays out.
import { describe, expect, it } from "vitest";
import { api, apiAs, createAgent } from "./support/api";

async function token(subject: string): Promise<string> {
  const res = await api("POST", "/v1/tokens", { ttl_s: 600, subject, agent: "own-norm" });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

describe("session ownership by normalized subject", () => {
  it("the same person written otherwise owns and reaches the session, lists it and opens sessions as it; another person does not", async () => {
    await createAgent({ name: "own-norm", model: "demo:fast" });
    const alice = await token("alice");
    const created = await apiAs("POST", "/v1/sessions", alice, { agent: "own-norm" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sid = created.body.session_id;

    for (const written of ["Alice", "alice ", " ALICE", "\uFF41\uFF4C\uFF49\uFF43\uFF45", "ali\u200Bce"]) {
      const same = await token(written);
      expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, same)).status, JSON.stringify(written)).toBe(200);
      const listed = await apiAs("GET", "/v1/sessions?owner=alice", same);
      expect(listed.status).toBe(200);
      expect(listed.body.sessions.map((s: any) => s.session_id)).toContain(sid);
      // What it opens is the same person's: owned by "alice", reached by the token written plainly.
      const opened = await apiAs("POST", "/v1/sessions", same, { agent: "own-norm" });
      expect(opened.status).toBe(201);
      expect((await api("GET", `/v1/sessions/${opened.body.session_id}`)).body).toMatchObject({ owner: "alice", resource_id: "alice" });
      expect((await apiAs("GET", `/v1/sessions/${opened.body.session_id}/thread`, alice)).status).toBe(200);
      expect((await apiAs("GET", "/v1/resources/alice/memory", same)).status).toBe(200);
    }

    for (const other of ["alice2", "al ice", "alic\u00E9", "bob"]) {
      const stranger = await token(other);
      const res = await apiAs("GET", `/v1/sessions/${sid}/thread`, stranger);
      expect(res.status, JSON.stringify(other)).toBe(403);
      expect(res.body.error.message).toBe("This token's subject does not own this session");
      expect((await apiAs("GET", "/v1/sessions?owner=alice", stranger)).status).toBe(403);
      expect((await apiAs("POST", "/v1/sessions", stranger, { agent: "own-norm", resource_id: "alice" })).status).toBe(403);
      expect((await apiAs("GET", "/v1/resources/alice/memory", stranger)).status).toBe(404);
    }
  });

  it('a session a key opened for owner "Alice " is the token alice\'s; a subject with nothing visible is 422 at minting', async () => {
    await createAgent({ name: "own-norm", model: "demo:fast" });
    const byKey = await api("POST", "/v1/sessions", { agent: "own-norm", owner: "Alice " });
    expect(byKey.status).toBe(201);
    expect((await apiAs("GET", `/v1/sessions/${byKey.body.session_id}/thread`, await token("alice"))).status).toBe(200);
    expect((await apiAs("GET", `/v1/sessions/${byKey.body.session_id}/thread`, await token("bob"))).status).toBe(403);

    for (const subject of [" ", "\u200B", "\u200E \u00A0"]) {
      const res = await api("POST", "/v1/tokens", { ttl_s: 600, subject, agent: "own-norm" });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ path: "subject", reason: "must hold a visible character" }]);
    }
  });
});
