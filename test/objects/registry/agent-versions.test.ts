// Agent versions through HTTP: each PUT that changes a config stores an immutable version (none when nothing
// changed), versions read and diff, a session runs the version it was opened with until it is moved
// explicitly, `name@3` opens a given version, lists filter by version, and deleting an agent drops its labels
// and traffic and keeps its versions, each readable by number, with no list of them, until its last session is
// erased.
import { describe, expect, it } from "vitest";
import { api, createAgent, events, expectOk, expectRefused, submitTurn, waitForTurnEnd } from "../../support/api";
import { requests, script, uniqueId } from "../../support/fake-model";

const uniqueName = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
const systemText = (req: any): string => (typeof req.messages[0]?.content === "string" ? req.messages[0].content : "");

async function put(name: string, config: Record<string, unknown>): Promise<{ status: number; version: string | null }> {
  const res = await api("PUT", `/v1/agents/${name}`, { name, ...config });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return { status: res.status, version: res.headers.get("agent-version") };
}

/** Runs one turn on `sid` and answers the system prompt the model got. */
async function instructionsOfTurn(sid: string, scriptId: string): Promise<string> {
  const { turn_id } = await submitTurn(sid, "hello");
  const log = await waitForTurnEnd(sid, turn_id);
  expect(log.at(-1).type).toBe("turn.completed");
  return systemText((await requests(scriptId)).at(-1));
}

describe("versions", () => {
  it("a changed config makes a new version, an unchanged one none; versions read and diff", async () => {
    const name = uniqueName("ver");
    expect(await put(name, { model: "demo:x", instructions: "one" })).toEqual({ status: 201, version: "1" });
    expect(await put(name, { model: "demo:x", instructions: "one" })).toEqual({ status: 200, version: "1" });
    expect(await put(name, { model: "demo:x", instructions: "two", tools: ["calculator"] })).toEqual({ status: 200, version: "2" });

    const { versions } = await expectOk("GET", `/v1/agents/${name}/versions`);
    expect(versions.map((v: any) => v.version)).toEqual([2, 1]);
    expect(versions[0]).toMatchObject({
      agent: name,
      created_by: expect.stringMatching(/^key_/),
      content_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(versions[0].content_hash).not.toBe(versions[1].content_hash);

    const v1 = await expectOk("GET", `/v1/agents/${name}/versions/1`);
    expect(v1).toMatchObject({ version: 1, config: { name, instructions: "one", tools: [] } });
    const diff = await expectOk("GET", `/v1/agents/${name}/versions/2/diff`);
    expect(diff).toEqual({
      agent: name,
      version: 2,
      against: 1,
      changes: [
        { path: "instructions", change: "changed", before: "one", after: "two" },
        { path: "tools[0]", change: "added", after: "calculator" },
      ],
    });
    expect((await expectOk("GET", `/v1/agents/${name}/versions/1/diff?against=2`)).changes[1]).toEqual({
      path: "tools[0]",
      change: "removed",
      before: "calculator",
    });
    expect((await api("GET", `/v1/agents/${name}/versions/3`)).status).toBe(404);
    expect((await api("GET", `/v1/agents/${name}/versions/2/diff?against=7`)).status).toBe(404);
    await expectRefused("GET", `/v1/agents/${name}/versions/two`, "version");
    await expectRefused("GET", `/v1/agents/${name}/versions/1/diff`, "against", undefined, "is needed: version 1 has no version before it");
    expect((await api("GET", `/v1/agents/${uniqueName("none")}/versions`)).status).toBe(404);
  });

  it("a session runs the version it was opened with; name@1 opens version 1; a move is explicit and logged", async () => {
    const scriptId = uniqueId("ver");
    await script(
      scriptId,
      Array.from({ length: 6 }, () => ({ text: "ok" })),
    );
    const name = uniqueName("pin");
    const model = `openai-compatible:${scriptId}`;
    await put(name, { model, instructions: "V1-INSTRUCTIONS" });
    const opened = await expectOk("POST", "/v1/sessions", { agent: name });
    expect(opened.agent_version).toBe(1);
    await put(name, { model, instructions: "V2-INSTRUCTIONS" });

    // Opened on version 1, it still runs version 1 after version 2 is stored.
    expect(await instructionsOfTurn(opened.session_id, scriptId)).toBe("V1-INSTRUCTIONS");
    const log = await events(opened.session_id);
    expect(log.find((e) => e.type === "session.created").payload).toMatchObject({ agent: name, version: 1 });
    expect((await expectOk("GET", `/v1/sessions/${opened.session_id}`)).agent_version).toBe(1);

    const latest = await expectOk("POST", "/v1/sessions", { agent: name });
    expect(latest.agent_version).toBe(2);
    expect(await instructionsOfTurn(latest.session_id, scriptId)).toBe("V2-INSTRUCTIONS");
    const pinned = await expectOk("POST", "/v1/sessions", { agent: `${name}@1` });
    expect(pinned.agent_version).toBe(1);
    expect(await instructionsOfTurn(pinned.session_id, scriptId)).toBe("V1-INSTRUCTIONS");

    // A version or label that does not exist: 422 naming the field, no session.
    await expectRefused("POST", "/v1/sessions", "agent", { agent: `${name}@9` }, `agent '${name}' has no version 9`);
    await expectRefused("POST", "/v1/sessions", "agent", { agent: `${name}@beta` }, `agent '${name}' has no label 'beta'`);
    // Names of Object's own members are labels like any other (they used to find the member and fail with a 500).
    for (const label of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      await expectRefused("POST", "/v1/sessions", "agent", { agent: `${name}@${label}` }, `agent '${name}' has no label '${label}'`);
    }
    // A number that is no version number is not read as a label: versions start at 1.
    for (const pin of ["0", "007"]) {
      const reason = `agent '${name}' has no version ${pin}: version numbers start at 1, without leading zeros`;
      await expectRefused("POST", "/v1/sessions", "agent", { agent: `${name}@${pin}` }, reason);
    }

    // Moving: a version that does not exist changes nothing; an existing one is an event, and the next turn runs it.
    await expectRefused("POST", `/v1/sessions/${opened.session_id}/agent`, "version", { version: 9 });
    const moved = await expectOk("POST", `/v1/sessions/${opened.session_id}/agent`, { version: 2 });
    expect(moved).toEqual({ session_id: opened.session_id, agent: name, from_version: 1, version: 2 });
    expect(await instructionsOfTurn(opened.session_id, scriptId)).toBe("V2-INSTRUCTIONS");
    const changed = (await events(opened.session_id)).filter((e) => e.type === "session.version_changed");
    expect(changed.map((e) => e.payload)).toEqual([{ agent: name, from_version: 1, to_version: 2, by: expect.stringMatching(/^key_/) }]);
    // A move to the version the session runs changes nothing: the same answer, no event.
    const logged = (await events(opened.session_id)).length;
    expect(await expectOk("POST", `/v1/sessions/${opened.session_id}/agent`, { version: 2 })).toEqual({ ...moved, from_version: 2 });
    expect((await events(opened.session_id)).length).toBe(logged);
    expect((await expectOk("GET", `/v1/sessions/${opened.session_id}`)).agent_version).toBe(2);

    // The index: rows name their version, and a list filters by it (rows are written off the turn's path).
    await expect
      .poll(async () => (await expectOk("GET", `/v1/sessions?agent=${name}&agent_version=1`)).sessions.map((s: any) => s.session_id), { timeout: 5000 })
      .toEqual([pinned.session_id]);
    const all = (await expectOk("GET", `/v1/sessions?agent=${name}`)).sessions;
    expect(all.map((s: any) => s.agent_version).sort()).toEqual([1, 2, 2]);
    await expectRefused("GET", `/v1/sessions?agent_version=first`, "agent_version");
    // Usage per version: a session's day counts under the version it ran last.
    const usage = await expectOk("GET", `/v1/usage?group_by=version&agent=${name}`);
    expect(usage.rows.map((r: any) => [r.key, r.turns])).toEqual([
      [`${name}@1`, 1],
      [`${name}@2`, 3],
    ]);
  });

  it("deleting an agent drops its labels and traffic; its versions stay readable by number but are no longer listed; a new agent of its name goes on from them", async () => {
    const name = uniqueName("del");
    const scriptId = uniqueId("deleted-agent");
    await script(scriptId, [{ text: "one" }, { text: "two" }]);
    await createAgent({ name, model: `openai-compatible:${scriptId}`, instructions: "a" });
    await put(name, { model: `openai-compatible:${scriptId}`, instructions: "b" });
    await expectOk("PUT", `/v1/agents/${name}/labels/production`, { version: 1 });
    await expectOk("PUT", `/v1/agents/${name}/traffic`, { routes: [{ label: "production", weight: 1 }] });
    const pinned = await expectOk("POST", "/v1/sessions", { agent: `${name}@1` });
    expect(await instructionsOfTurn(pinned.session_id, scriptId)).toContain("a");
    await expectOk("DELETE", `/v1/agents/${name}`);

    // No list of a deleted agent's versions: a 404 that says so, naming the versions kept.
    const listed = await api("GET", `/v1/agents/${name}/versions`);
    expect(listed.status).toBe(404);
    expect(listed.body.error).toMatchObject({ code: "not_found", details: { deleted: true, versions: [2, 1] } });
    expect(listed.body.error.message).toContain(`Agent '${name}' was deleted`);
    expect(listed.body.error.message).toContain(`GET /v1/agents/${name}/versions/:version`);
    // An agent that never was is a plain 404.
    const never = await api("GET", `/v1/agents/${uniqueName("never")}/versions`);
    expect([never.status, never.body.error.message]).toEqual([404, expect.stringContaining("was not found")]);
    // The versions its sessions ran stay readable by number, and diff; labels and traffic went with the agent.
    expect((await expectOk("GET", `/v1/agents/${name}/versions/1`)).config.instructions).toBe("a");
    expect((await expectOk("GET", `/v1/agents/${name}/versions/2/diff`)).changes).toEqual([
      { path: "instructions", change: "changed", before: "a", after: "b" },
    ]);
    expect((await api("GET", `/v1/agents/${name}/labels`)).status).toBe(404);
    expect((await api("GET", `/v1/agents/${name}/traffic`)).status).toBe(404);
    for (const agent of [name, `${name}@1`, `${name}@production`]) expect((await api("POST", "/v1/sessions", { agent })).status, agent).toBe(404);
    // A session pinned to version 1 keeps running it.
    expect(await instructionsOfTurn(pinned.session_id, scriptId)).toContain("a");
    expect((await expectOk("GET", `/v1/sessions/${pinned.session_id}`)).agent_version).toBe(1);

    // Created again: numbering goes on, the list is back, and no label or traffic of the deleted agent returns.
    expect(await put(name, { model: "demo:x", instructions: "c" })).toEqual({ status: 201, version: "3" });
    expect((await expectOk("GET", `/v1/agents/${name}/versions`)).versions.map((v: any) => v.version)).toEqual([3, 2, 1]);
    expect((await expectOk("GET", `/v1/agents/${name}/labels`)).labels).toEqual([]);
    expect((await expectOk("GET", `/v1/agents/${name}/traffic`)).routes).toEqual([]);
  });

  it("a deleted agent's versions go with its last session, or at once when it has none; the numbering goes on", async () => {
    const name = uniqueName("gone");
    await put(name, { model: "demo:x", instructions: "a" });
    await put(name, { model: "demo:x", instructions: "b" });
    const pinned = await expectOk("POST", "/v1/sessions", { agent: `${name}@1` });
    const latest = await expectOk("POST", "/v1/sessions", { agent: name });
    // Both in the index before the delete (each session writes its row in a task of its own).
    for (let i = 0; (await expectOk("GET", `/v1/sessions?agent=${name}`)).sessions.length < 2; i++) {
      expect(i, "sessions indexed").toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 50));
    }
    await expectOk("DELETE", `/v1/agents/${name}`);
    await expectOk("DELETE", `/v1/sessions/${pinned.session_id}`);
    // One session of it is left: still readable by number.
    expect((await expectOk("GET", `/v1/agents/${name}/versions/1`)).config.instructions).toBe("a");
    await expectOk("DELETE", `/v1/sessions/${latest.session_id}`);
    for (const v of [1, 2]) expect((await api("GET", `/v1/agents/${name}/versions/${v}`)).status, `version ${v}`).toBe(404);
    const listed = await api("GET", `/v1/agents/${name}/versions`);
    expect([listed.status, listed.body.error.message]).toEqual([404, expect.stringContaining("was not found")]);
    expect(await put(name, { model: "demo:x", instructions: "c" })).toEqual({ status: 201, version: "3" });

    // No session at all: its versions go with the delete; created again, it goes on from the last number.
    const lone = uniqueName("lone");
    await put(lone, { model: "demo:x", instructions: "a" });
    await expectOk("DELETE", `/v1/agents/${lone}`);
    expect((await api("GET", `/v1/agents/${lone}/versions/1`)).status).toBe(404);
    expect(await put(lone, { model: "demo:x", instructions: "a" })).toEqual({ status: 201, version: "2" });
  });
});
