// A token's subject owns and reaches sessions exactly as written: `Alice` and `alice` are two people (a product
// whose ids differ only by case must not merge two users). A subject must be canonical to be minted (no
// leading or trailing white space, no invisible or control characters, NFKC), so two subjects that look alike
// cannot both exist; a token whose subject is not canonical (minted before that rule) is refused, not aliased.
import { describe, expect, it } from "vitest";
import { api, apiAs, createAgent } from "../../support/api";
import { resignedToken } from "../../support/tokens";

const AGENT = "own-subjects";

async function token(subject: string): Promise<string> {
  const res = await api("POST", "/v1/tokens", { ttl_s: 600, subject, agent: AGENT });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

async function listed(as: string): Promise<string[]> {
  const res = await apiAs("GET", "/v1/sessions", as);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.sessions.map((s: any) => s.session_id);
}

describe("session ownership by exact subject", () => {
  it("`Alice` and `alice` are distinct owners: neither reaches, lists or opens sessions in the other's name", async () => {
    await createAgent({ name: AGENT, model: "demo:fast" });
    const upper = await token("Alice");
    const lower = await token("alice");
    const sessions: Record<string, string> = {};
    for (const [subject, as] of [
      ["Alice", upper],
      ["alice", lower],
    ] as const) {
      const created = await apiAs("POST", "/v1/sessions", as, { agent: AGENT });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      sessions[subject] = created.body.session_id;
      expect((await api("GET", `/v1/sessions/${created.body.session_id}`)).body).toMatchObject({ owner: subject, resource_id: subject });
    }

    for (const [self, other, as] of [
      ["Alice", "alice", upper],
      ["alice", "Alice", lower],
    ] as const) {
      expect((await apiAs("GET", `/v1/sessions/${sessions[self]}/thread`, as)).status).toBe(200);
      const theirs = await apiAs("GET", `/v1/sessions/${sessions[other]}/thread`, as);
      expect(theirs.status, self).toBe(403);
      expect(theirs.body.error.message).toBe("This token's subject does not own this session");
      const mine = await listed(as);
      expect(mine).toContain(sessions[self]);
      expect(mine).not.toContain(sessions[other]);
      expect((await apiAs("GET", `/v1/sessions?owner=${other}`, as)).status).toBe(403);
      expect((await apiAs("POST", "/v1/sessions", as, { agent: AGENT, resource_id: other })).status).toBe(403);
      expect((await apiAs("GET", `/v1/resources/${self}/memory`, as)).status).toBe(200);
      expect((await apiAs("GET", `/v1/resources/${other}/memory`, as)).status).toBe(404);
    }

    // A session a key opens for an owner is the token of exactly that subject's.
    const byKey = await api("POST", "/v1/sessions", { agent: AGENT, owner: "alice" });
    expect(byKey.status).toBe(201);
    expect((await apiAs("GET", `/v1/sessions/${byKey.body.session_id}/thread`, lower)).status).toBe(200);
    expect((await apiAs("GET", `/v1/sessions/${byKey.body.session_id}/thread`, upper)).status).toBe(403);
  });

  it("a subject that is not canonical is 422 naming subject and why at minting, and changes nothing", async () => {
    await createAgent({ name: AGENT, model: "demo:fast" });
    const alice = await token("alice");
    await apiAs("POST", "/v1/sessions", alice, { agent: AGENT });
    const before = await listed(alice);
    const refused: [string, string][] = [
      ["alice ", "must not have leading or trailing whitespace"],
      ["\u00A0alice", "must not have leading or trailing whitespace"],
      [" ", "must not have leading or trailing whitespace"],
      ["ali\u200Bce", "must not hold invisible or control characters (U+200B)"],
      ["alice\u0000", "must not hold invisible or control characters (U+0000)"],
      ["\u202Eecila", "must not hold invisible or control characters (U+202E)"],
      ["alice\uFE0F", "must not hold invisible or control characters (U+FE0F)"],
      ["\uFF41\uFF4C\uFF49\uFF43\uFF45", 'must be in Unicode NFKC form (U+FF41 is "a")'],
      ["alic\u0065\u0301", "must be in Unicode NFKC form"],
    ];
    for (const [subject, reason] of refused) {
      const res = await api("POST", "/v1/tokens", { ttl_s: 600, subject, agent: AGENT });
      expect(res.status, JSON.stringify(subject)).toBe(422);
      expect(res.body.token).toBeUndefined();
      expect(res.body.error.details).toEqual([{ path: "subject", reason }]);
    }
    // A key names an owner or a resource under the same rule: the session it opens is one a token can reach.
    for (const [field, value] of <[string, string][]>[
      ["owner", "alice "],
      ["resource_id", "ali\u200Bce"],
    ]) {
      const res = await api("POST", "/v1/sessions", { agent: AGENT, [field]: value });
      expect(res.status, field).toBe(422);
      expect(res.body.error.details).toEqual([{ path: field, reason: expect.stringMatching(/^must not/) }]);
    }
    expect(await listed(alice)).toEqual(before);
    // Canonical subjects of any script and case are minted as written.
    for (const subject of ["Alice", "alic\u00E9", "al ice", "usr_AbC", "\u30A2\u30EA\u30B9"]) {
      expect((await api("POST", "/v1/tokens", { ttl_s: 600, subject, agent: AGENT })).body.subject).toBe(subject);
    }
  });

  it("a token whose subject is not canonical (minted before the rule) is 401 invalid_token saying why", async () => {
    await createAgent({ name: AGENT, model: "demo:fast" });
    const alice = await token("alice");
    const created = await apiAs("POST", "/v1/sessions", alice, { agent: AGENT });
    const sid = created.body.session_id;
    for (const [sub, why] of [
      ["alice ", "must not have leading or trailing whitespace"],
      ["ali\u200Bce", "must not hold invisible or control characters (U+200B)"],
      ["\uFF41\uFF4C\uFF49\uFF43\uFF45", "must be in Unicode NFKC form"],
    ]) {
      const old = await resignedToken({ subject: "alice", agent: AGENT }, { sub });
      for (const path of [`/v1/sessions/${sid}/thread`, "/v1/sessions", "/v1/resources/alice/memory"]) {
        const res = await apiAs("GET", path, old);
        expect(res.status, `${JSON.stringify(sub)} ${path}`).toBe(401);
        expect(res.body.error.code).toBe("invalid_token");
        expect(res.body.error.message).toContain(`The token's subject (sub) is not canonical: it ${why}`);
      }
      expect((await apiAs("POST", "/v1/sessions", old, { agent: AGENT })).status).toBe(401);
    }
    // The same claims with the canonical subject still reach the session.
    expect((await apiAs("GET", `/v1/sessions/${sid}/thread`, await resignedToken({ subject: "alice", agent: AGENT }, { sub: "alice" }))).status).toBe(200);
  });
});
