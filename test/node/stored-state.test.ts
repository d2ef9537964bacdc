// A session stored by an earlier runtime (test/fixtures/state-9e0bf77: before the session's capability folders)
// opens on today's: its log, turns and schedule read as they were, and a new turn runs on it, the whole log
// passing the verifier.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyLog } from "../../src/engine/verify-log";
import { callRuntime, runtimeProcess, until, workerBundle } from "./support/runtime-process";

const KEY = "legacy-key";
const SID = "ses_03456583ef1a55e3385a9ab8";
const FIXTURE = join(import.meta.dirname, "..", "fixtures", "state-9e0bf77");
const bundle = workerBundle();
let state: string;
let mf: Miniflare;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "stored-state-"));
  cpSync(FIXTURE, state, { recursive: true, filter: (src) => !/\.(md|mjs)$/.test(src) });
  mf = runtimeProcess(bundle, state, { API_KEYS: KEY, LOGS: "off" });
}, 120_000);
afterAll(async () => {
  await mf?.dispose();
  rmSync(state, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown) => callRuntime(mf, KEY, method, path, body);

describe("a session stored by an earlier runtime", () => {
  it("reads as it was, and runs a new turn after its stored one", async () => {
    const before = await call("GET", `/v1/sessions/${SID}`);
    expect(before.status).toBe("idle");
    expect(before.turns.map((t: any) => [t.status, t.output_preview])).toEqual([["completed", "The answer is 42."]]);
    expect((await call("GET", `/v1/sessions/${SID}/schedules`)).schedules.map((s: any) => s.input)).toEqual(["a later turn"]);
    const stored = (await call("GET", `/v1/sessions/${SID}/events?after=0&limit=1000`)).events;

    const { turn_id } = await call("POST", `/v1/sessions/${SID}/turns`, { input: "what is 2 + 3?" });
    await until(async () => (await call("GET", `/v1/sessions/${SID}`)).turns.at(-1).status === "completed");

    const log = (await call("GET", `/v1/sessions/${SID}/events?after=0&limit=1000`)).events;
    expect(log.slice(0, stored.length)).toEqual(stored);
    expect(verifyLog(log)).toEqual([]);
    expect(
      log
        .filter((e: any) => e.type === "turn.completed")
        .map((e: any) => e.turn_id)
        .at(-1),
    ).toBe(turn_id);
    const after = await call("GET", `/v1/sessions/${SID}`);
    expect(after.turns.map((t: any) => t.output_preview)).toEqual(["The answer is 42.", "The answer is 5."]);
    expect((await call("GET", "/v1/sessions?agent=legacy")).sessions.map((s: any) => s.session_id)).toEqual([SID]);
  }, 60_000);

  it("its agent becomes version 1, and a changed config version 2", async () => {
    const [v1] = (await call("GET", "/v1/agents/legacy/versions")).versions;
    expect(v1).toMatchObject({ agent: "legacy", version: 1, created_by: null, content_hash: expect.stringMatching(/^sha256:/) });
    const config = await call("GET", "/v1/agents/legacy");
    expect((await call("GET", "/v1/agents/legacy/versions/1")).config).toEqual(config);
    // A session opened before versions names none.
    expect((await call("GET", `/v1/sessions/${SID}`)).agent_version).toBeNull();
    await call("PUT", "/v1/agents/legacy", { ...config, instructions: `${config.instructions} Be brief.` });
    expect((await call("GET", "/v1/agents/legacy/versions")).versions.map((v: any) => v.version)).toEqual([2, 1]);
  }, 60_000);
});
