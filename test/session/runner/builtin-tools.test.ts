// The built-in workspace, memory and http_fetch tools through the public surface: a scripted
// model makes exactly the tool calls under test; the tests read the tool.result events, what the next model
// request received, and what landed in R2 (BLOBS) or the session's memory.
import { env, evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, events, expectGapless, submitTurn, waitForTurnEnd } from "../../support/api";
import { baseURL, requests, type ScriptedToolCall, script, uniqueId } from "../../support/fake-model";

const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));

const WORKSPACE_TOOLS = ["workspace_read", "workspace_write", "workspace_list"];
const MEMORY_TOOLS = ["memory_read", "memory_write", "memory_list"];
const ALL_TOOLS = [...WORKSPACE_TOOLS, ...MEMORY_TOOLS, "http_fetch"];

/** The fake server's port: TOOL_URL_ALLOWLIST is `http://127.0.0.1:${PORT}/`. */
const PORT = new URL(baseURL).port;

interface Session {
  sid: string;
  scriptId: string;
}

/** A session on an inline agent that uses the fake model (its own script id), with an optional policy. */
async function newSession(opts: { policy?: Record<string, unknown>; tools?: string[] } = {}): Promise<Session> {
  const scriptId = uniqueId("builtin");
  const agent = { name: "builtin-tools", model: `openai-compatible:${scriptId}`, tools: opts.tools ?? ALL_TOOLS };
  const res = await api("POST", "/v1/sessions", opts.policy ? { agent, policy: opts.policy } : { agent });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { sid: res.body.session_id, scriptId };
}

interface TurnRun {
  turnId: string;
  log: any[];
  /** The tool.result payloads, one per scripted call, in script order (steps, then calls within a step). */
  results: any[];
  /** The Chat Completions requests the model received in this turn. */
  modelRequests: any[];
}

let callCounter = 0;

/**
 * One turn in which the model makes `steps[i]`'s tool calls in step i, then answers "done"; the turn must
 * complete (or, with historyMayOverflow, may instead fail budget_exceeded once the calls have run).
 * Each call gets a unique id, so every tool.result is matched to its call.
 */
async function runTurn(s: Session, steps: ScriptedToolCall[][], opts: { historyMayOverflow?: boolean } = {}): Promise<TurnRun> {
  const withIds = steps.map((calls) => calls.map((c) => ({ ...c, id: `call_bt_${++callCounter}_${crypto.randomUUID().slice(0, 8)}` })));
  await script(s.scriptId, [...withIds.map((tool_calls) => ({ tool_calls })), { text: "done" }]);
  const { turn_id } = await submitTurn(s.sid, "go");
  const log = await waitForTurnEnd(s.sid, turn_id, 30_000);
  expectGapless(log);
  const end = log.find((e) => e.turn_id === turn_id && ["turn.completed", "turn.failed", "turn.cancelled"].includes(e.type));
  if (opts.historyMayOverflow && end.type === "turn.failed") {
    // Arguments of ~1 MB put the next model request over max_history_tokens: the turn then ends
    // budget_exceeded after the tool ran.
    expect(end.payload.error.code, JSON.stringify(end.payload)).toBe("budget_exceeded");
  } else {
    expect(end.type, JSON.stringify(end.payload)).toBe("turn.completed");
  }
  const results = withIds.flat().map((c) => {
    const found = log.find((e) => e.type === "tool.result" && e.tool_call_id === c.id);
    expect(found, `no tool.result for ${c.name} (${c.id})`).toBeDefined();
    expect(found.payload.name).toBe(c.name);
    return found.payload;
  });
  return { turnId: turn_id, log, results, modelRequests: await requests(s.scriptId) };
}

/** The tool messages (by tool_call_id) of the model request that followed step `stepIndex`. */
function toolMessages(run: TurnRun, stepIndex: number): Map<string, string> {
  const req = run.modelRequests[stepIndex + 1];
  expect(req, `no model request after step ${stepIndex}`).toBeDefined();
  const map = new Map<string, string>();
  for (const m of req.messages) if (m.role === "tool") map.set(m.tool_call_id, m.content);
  return map;
}

/**
 * Every R2 key under the session's prefix except spilled artifacts (large tool arguments and results the
 * runtime itself stores under sessions/<sid>/artifacts/): what a tool could have written.
 */
async function sessionKeys(sid: string): Promise<string[]> {
  const listed = await env.BLOBS.list({ prefix: `sessions/${sid}/` });
  return listed.objects.map((o) => o.key).filter((k) => !k.startsWith(`sessions/${sid}/artifacts/`));
}

/** The R2 keys of the session's workspace files. */
async function workspaceKeys(sid: string): Promise<string[]> {
  const listed = await env.BLOBS.list({ prefix: `sessions/${sid}/workspace/` });
  return listed.objects.map((o) => o.key).sort();
}

/** A call to a tool outside the session's toolbelt (refused by the SDK's tool lookup or by the runtime). */
const UNAVAILABLE = /unavailable tool|not available in this session/;

const bytes = (s: string) => new TextEncoder().encode(s).byteLength;

function expectSuccess(result: any) {
  expect(result.is_error, JSON.stringify(result.output)).toBe(false);
  expect(result.metadata).toMatchObject({ status: "success", approval_status: "not_required" });
}

function expectError(result: any, message: RegExp) {
  expect(result.is_error, JSON.stringify(result)).toBe(true);
  expect(result.metadata.status).toBe("error");
  expect(typeof result.output).toBe("string");
  expect(result.output).toMatch(message);
}

describe("workspace tools", () => {
  it("writes, reads and lists files, stored in R2 under the session's workspace prefix", async () => {
    const s = await newSession();
    const plan = "# Plan\nstep one ✓\n";
    const notes = "notes with a space in the name";
    const run = await runTurn(s, [
      [
        { name: "workspace_write", arguments: { path: "notes/plan.md", content: plan } },
        { name: "workspace_write", arguments: { path: "docs/notes v2.md", content: notes } },
      ],
      [
        { name: "workspace_read", arguments: { path: "notes/plan.md" } },
        { name: "workspace_read", arguments: { path: "docs/notes v2.md" } },
        { name: "workspace_list", arguments: {} },
      ],
      [{ name: "workspace_list", arguments: { path: "docs" } }],
    ]);
    const [writePlan, writeNotes, readPlan, readNotes, listAll, listDocs] = run.results;
    for (const r of run.results) expectSuccess(r);
    expect(writePlan.output).toEqual({ path: "notes/plan.md", bytes: bytes(plan) });
    expect(writeNotes.output).toEqual({ path: "docs/notes v2.md", bytes: bytes(notes) });
    expect(readPlan.output).toBe(plan);
    expect(readNotes.output).toBe(notes);
    expect(listAll.output).toEqual({
      files: [
        { path: "docs/notes v2.md", bytes: bytes(notes) },
        { path: "notes/plan.md", bytes: bytes(plan) },
      ],
    });
    expect(listDocs.output).toEqual({ files: [{ path: "docs/notes v2.md", bytes: bytes(notes) }] });

    // The model received the file content in the request after the read step.
    const step2 = toolMessages(run, 1);
    expect(step2.get(run.log.find((e) => e.type === "tool.result" && e.payload === readPlan).tool_call_id)).toBe(plan);

    // Stored in R2, exactly under sessions/<sid>/workspace/<path>.
    expect(await workspaceKeys(s.sid)).toEqual([`sessions/${s.sid}/workspace/docs/notes v2.md`, `sessions/${s.sid}/workspace/notes/plan.md`]);
    const obj = await env.BLOBS.get(`sessions/${s.sid}/workspace/notes/plan.md`);
    expect(await obj!.text()).toBe(plan);

    // The workspace outlives the turn (and the object).
    await evictDurableObject(stub(s.sid));
    const later = await runTurn(s, [[{ name: "workspace_read", arguments: { path: "notes/plan.md" } }]]);
    expectSuccess(later.results[0]);
    expect(later.results[0].output).toBe(plan);
  });

  it("replaces a file on a second write", async () => {
    const s = await newSession();
    const run = await runTurn(s, [
      [{ name: "workspace_write", arguments: { path: "a.txt", content: "first" } }],
      [{ name: "workspace_write", arguments: { path: "a.txt", content: "second!" } }],
      [
        { name: "workspace_read", arguments: { path: "a.txt" } },
        { name: "workspace_list", arguments: {} },
      ],
    ]);
    run.results.forEach(expectSuccess);
    expect(run.results[2].output).toBe("second!");
    expect(run.results[3].output).toEqual({ files: [{ path: "a.txt", bytes: 7 }] });
  });

  it("keeps each session's workspace invisible to every other session", async () => {
    const a = await newSession();
    const b = await newSession();
    const wrote = await runTurn(a, [[{ name: "workspace_write", arguments: { path: "secret.txt", content: "only for a" } }]]);
    expectSuccess(wrote.results[0]);
    const run = await runTurn(b, [
      [
        { name: "workspace_read", arguments: { path: "secret.txt" } },
        { name: "workspace_list", arguments: {} },
      ],
    ]);
    expectError(run.results[0], /^No file at "secret\.txt"/);
    expectSuccess(run.results[1]);
    expect(run.results[1].output).toEqual({ files: [] });
    expect(await sessionKeys(b.sid)).toEqual([]);
    expect(await workspaceKeys(a.sid)).toEqual([`sessions/${a.sid}/workspace/secret.txt`]);
  });

  it("reading a file that was never written is an error result", async () => {
    const s = await newSession();
    const run = await runTurn(s, [[{ name: "workspace_read", arguments: { path: "missing/file.txt" } }]]);
    expectError(run.results[0], /^No file at "missing\/file\.txt"/);
    // The model saw the error.
    const msg = toolMessages(run, 0);
    expect([...msg.values()][0]).toMatch(/No file at/);
  });

  it("confines files to policy.workspace_root and lists paths relative to it", async () => {
    const s = await newSession({ policy: { workspace_root: "/proj" } });
    const snapshot = await api("GET", `/v1/sessions/${s.sid}/tools`);
    expect(snapshot.status).toBe(200);
    const run = await runTurn(s, [
      [
        { name: "workspace_write", arguments: { path: "src/main.ts", content: "export {};\n" } },
        { name: "workspace_write", arguments: { path: "README.md", content: "# proj" } },
      ],
      [
        { name: "workspace_list", arguments: {} },
        { name: "workspace_list", arguments: { path: "src" } },
        { name: "workspace_read", arguments: { path: "src/main.ts" } },
        // "proj/..." is a path inside the root, not the root itself.
        { name: "workspace_read", arguments: { path: "proj/src/main.ts" } },
      ],
    ]);
    const [w1, w2, listAll, listSrc, read, readDoubled] = run.results;
    [w1, w2, listAll, listSrc, read].forEach(expectSuccess);
    expect(w1.output).toEqual({ path: "src/main.ts", bytes: 11 });
    expect(listAll.output).toEqual({
      files: [
        { path: "README.md", bytes: 6 },
        { path: "src/main.ts", bytes: 11 },
      ],
    });
    expect(listSrc.output).toEqual({ files: [{ path: "src/main.ts", bytes: 11 }] });
    expect(read.output).toBe("export {};\n");
    expectError(readDoubled, /No file at/);
    expect(await workspaceKeys(s.sid)).toEqual([`sessions/${s.sid}/workspace/proj/README.md`, `sessions/${s.sid}/workspace/proj/src/main.ts`]);
  });

  it("normalizes a trailing slash on workspace_root and refuses roots that are not plain absolute paths", async () => {
    const s = await newSession({ policy: { workspace_root: "/proj/sub/" } });
    const run = await runTurn(s, [[{ name: "workspace_write", arguments: { path: "f.txt", content: "x" } }]]);
    expectSuccess(run.results[0]);
    expect(await workspaceKeys(s.sid)).toEqual([`sessions/${s.sid}/workspace/proj/sub/f.txt`]);

    const agent = { name: "builtin-tools", model: "demo:x", tools: WORKSPACE_TOOLS };
    for (const workspace_root of ["proj", "/../x", "/a/../b", "/a/./b", "/a//b", "/%2e%2e", "/a\\b"]) {
      const res = await api("POST", "/v1/sessions", { agent, policy: { workspace_root } });
      expect(res.status, `${workspace_root}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
  });

  it("refuses paths that escape the workspace at call time and writes nothing", async () => {
    const s = await newSession({ policy: { workspace_root: "/proj" } });
    const deep = `${Array.from({ length: 40 }, (_, i) => `d${i}`).join("/")}/f.txt`;
    const bad = [
      "../x",
      "..",
      ".",
      "a/../../b",
      "a/..",
      "/etc/passwd",
      "/x",
      "./a",
      "a/./b",
      "a//b",
      "a\\b",
      "..\\x",
      "%2e%2e/x",
      "%2E%2E%2Fx",
      "..%2fx",
      "a\u0000b",
      "a\nb",
      "a\rb",
      "a\tb",
      "\uFF0E\uFF0E/x", // fullwidth dots
      "~/x",
      "C:\\x",
      "file:///etc/passwd",
      deep,
      "x".repeat(129),
    ];
    const run = await runTurn(s, [
      [
        ...bad.map((path) => ({ name: "workspace_write", arguments: { path, content: "pwned" } })),
        { name: "workspace_write", arguments: { path: "", content: "pwned" } },
      ],
      [
        ...bad.map((path) => ({ name: "workspace_read", arguments: { path } })),
        { name: "workspace_read", arguments: { path: "" } },
        ...["../", "..", "/", "/proj", "a/../..", "%2e%2e"].map((path) => ({ name: "workspace_list", arguments: { path } })),
      ],
    ]);
    for (const [i, r] of run.results.entries()) {
      expect(r.is_error, `call ${i} (${r.name}) should be refused: ${JSON.stringify(r.output)}`).toBe(true);
      expect(r.metadata.status).toBe("error");
      expect(r.output).toMatch(/^Refused path/);
    }
    expect(await sessionKeys(s.sid)).toEqual([]);
    // The refusals reached the model as error results.
    const msgs = toolMessages(run, 0);
    expect(msgs.size).toBe(bad.length + 1);
    for (const content of msgs.values()) expect(content).toMatch(/^Refused path/);
  });

  it("refuses Unicode look-alikes of a dot or slash, plain or percent-encoded, naming the path and the character; writes nothing", async () => {
    const s = await newSession({ policy: { workspace_root: "/proj" } });
    const lookalikes: [string, string][] = [
      ["\uFF0E\uFF0E/x", "U+FF0E"],
      ["a/\u2024\u2024/x", "U+2024"],
      ["\u3002\u3002/x", "U+3002"],
      ["\uFE52\uFE52/x", "U+FE52"],
      ["\uFF61\uFF61/x", "U+FF61"],
      ["a/\u2025/x", "U+2025"],
      ["..\uFF0Fx", "U+FF0F"],
      ["..\uFF3Cx", "U+FF3C"],
      ["..\u2215x", "U+2215"],
      ["%EF%BC%8E%EF%BC%8E/x", "U+FF0E"],
      ["..%EF%BC%8Fx", "U+FF0F"],
      ["%25EF%25BC%258E%25EF%25BC%258E/x", "U+FF0E"],
    ];
    const run = await runTurn(s, [
      lookalikes.map(([path]) => ({ name: "workspace_write", arguments: { path, content: "pwned" } })),
      [...lookalikes.map(([path]) => ({ name: "workspace_read", arguments: { path } })), { name: "workspace_list", arguments: { path: "\uFF0E\uFF0E" } }],
    ]);
    const expected = [...lookalikes, ...lookalikes, ["\uFF0E\uFF0E", "U+FF0E"]];
    for (const [i, r] of run.results.entries()) {
      const [path, codepoint] = expected[i]!;
      expect(r.is_error, `call ${i} (${r.name}): ${JSON.stringify(r.output)}`).toBe(true);
      expect(r.output).toBe(`Refused path ${JSON.stringify(path)}: must not hold a Unicode look-alike of a dot or slash (${codepoint})`);
    }
    expect(await sessionKeys(s.sid)).toEqual([]);
    // A workspace_root holding one is refused when the session is created, naming it.
    const agent = { name: "builtin-tools", model: "demo:x", tools: WORKSPACE_TOOLS };
    for (const workspace_root of ["/proj/\uFF0E\uFF0E", "/proj%EF%BC%8F"]) {
      const res = await api("POST", "/v1/sessions", { agent, policy: { workspace_root } });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([
        { path: "policy.workspace_root", reason: expect.stringMatching(/^must not hold a Unicode look-alike of a dot or slash \(U\+FF0[EF]\)$/) },
      ]);
    }
  });

  it("accepts legitimate nested paths: spaces, dots inside names, 32 segments", async () => {
    const s = await newSession();
    const deepest = `${Array.from({ length: 31 }, (_, i) => `d${i}`).join("/")}/f.txt`;
    const good = ["docs/notes v2.md", "a/b/c.txt", "x..y", "v1.2.3/release-notes_(draft).md", "dir/", deepest, "y".repeat(128)];
    const run = await runTurn(s, [
      good.map((path) => ({ name: "workspace_write", arguments: { path, content: `content of ${path}` } })),
      good.map((path) => ({ name: "workspace_read", arguments: { path } })),
    ]);
    run.results.forEach(expectSuccess);
    for (const [i, path] of good.entries()) expect(run.results[good.length + i].output).toBe(`content of ${path}`);
    // A trailing slash names the same file as without it.
    expect(run.results[good.indexOf("dir/")].output).toEqual({ path: "dir", bytes: bytes("content of dir/") });
    const keys = await workspaceKeys(s.sid);
    expect(keys).toContain(`sessions/${s.sid}/workspace/docs/notes v2.md`);
    expect(keys).toContain(`sessions/${s.sid}/workspace/${deepest}`);
    expect(keys).toContain(`sessions/${s.sid}/workspace/dir`);
  });

  it("a path too long for an R2 key is an error result and nothing is written", async () => {
    const s = await newSession();
    // 9 segments of 128 characters: a valid path by segment rules, but over R2's 1,024-byte key limit.
    const long = Array.from({ length: 9 }, () => "p".repeat(128)).join("/");
    const run = await runTurn(s, [[{ name: "workspace_write", arguments: { path: long, content: "x" } }]]);
    expect(run.results[0].is_error).toBe(true);
    expect(run.results[0].metadata.status).toBe("error");
    expect(await sessionKeys(s.sid)).toEqual([]);
  });

  it("refuses content over 1,000,000 bytes (counted in UTF-8) and writes nothing", async () => {
    const s = await newSession();
    const run = await runTurn(
      s,
      [
        [
          { name: "workspace_write", arguments: { path: "big.txt", content: "x".repeat(1_000_001) } },
          // 333,334 characters, 1,000,002 bytes.
          { name: "workspace_write", arguments: { path: "euro.txt", content: "€".repeat(333_334) } },
        ],
      ],
      { historyMayOverflow: true },
    );
    expectError(run.results[0], /larger than 1000000 bytes/);
    expectError(run.results[1], /larger than 1000000 bytes/);
    expect(await sessionKeys(s.sid)).toEqual([]);
  });

  it("accepts content of exactly 1,000,000 bytes", async () => {
    const s = await newSession();
    const content = "z".repeat(1_000_000);
    const run = await runTurn(s, [[{ name: "workspace_write", arguments: { path: "max.txt", content } }]], { historyMayOverflow: true });
    expectSuccess(run.results[0]);
    expect(run.results[0].output).toEqual({ path: "max.txt", bytes: 1_000_000 });
    const obj = await env.BLOBS.head(`sessions/${s.sid}/workspace/max.txt`);
    expect(obj?.size).toBe(1_000_000);
  });

  it("refuses arguments of the wrong shape by schema validation and writes nothing", async () => {
    const s = await newSession();
    const run = await runTurn(s, [
      [
        { name: "workspace_write", arguments: { path: "a.txt", content: 5 } },
        { name: "workspace_write", arguments: { path: 7, content: "x" } },
        { name: "workspace_write", arguments: { path: "b.txt" } },
        { name: "workspace_write", arguments: { content: "x" } },
        { name: "workspace_write", arguments: { path: "c.txt", content: "x", mode: "append" } },
        { name: "workspace_write", arguments: { path: ["d.txt"], content: "x" } },
        { name: "workspace_write", arguments: "{not json" },
        { name: "workspace_read", arguments: { path: null } },
        { name: "workspace_list", arguments: { path: 3 } },
      ],
    ]);
    for (const r of run.results.slice(0, 6)) expectError(r, /Invalid arguments for "workspace_write"/);
    expectError(run.results[6], /Invalid/);
    expectError(run.results[7], /Invalid arguments for "workspace_read"/);
    expectError(run.results[8], /Invalid arguments for "workspace_list"/);
    expect(run.results[0].output).toMatch(/content/);
    expect(await sessionKeys(s.sid)).toEqual([]);
  });
});

describe("memory tools", () => {
  it("round-trips values within a turn, across turns and across a restart of the session object", async () => {
    const s = await newSession();
    const run = await runTurn(s, [
      [
        { name: "memory_write", arguments: { key: "user.name", value: "Ada" } },
        { name: "memory_write", arguments: { key: "user.city", value: "Zürich" } },
        { name: "memory_write", arguments: { key: "task", value: "write tests" } },
      ],
      [
        { name: "memory_read", arguments: { key: "user.name" } },
        { name: "memory_read", arguments: { key: "nothing-here" } },
        { name: "memory_list", arguments: { prefix: "user." } },
        { name: "memory_list", arguments: {} },
      ],
    ]);
    const [w1, w2, w3, read, missing, listUser, listAll] = run.results;
    [w1, w2, w3, read, listUser, listAll].forEach(expectSuccess);
    expect(w1.output).toEqual({ key: "user.name", stored: true });
    expect(read.output).toBe("Ada");
    expectError(missing, /Nothing is stored under "nothing-here"/);
    expect(listUser.output).toEqual({
      keys: [
        { key: "user.city", bytes: bytes("Zürich") },
        { key: "user.name", bytes: 3 },
      ],
    });
    expect(listAll.output.keys.map((k: any) => k.key)).toEqual(["task", "user.city", "user.name"]);
    // The model saw the value.
    const readId = run.log.find((e) => e.type === "tool.result" && e.payload === read).tool_call_id;
    expect(toolMessages(run, 1).get(readId)).toBe("Ada");

    // Next turn: still there; overwrite one value.
    const t2 = await runTurn(s, [
      [{ name: "memory_read", arguments: { key: "user.city" } }],
      [{ name: "memory_write", arguments: { key: "task", value: "ship it" } }],
    ]);
    t2.results.forEach(expectSuccess);
    expect(t2.results[0].output).toBe("Zürich");

    // A restart of the session object loses nothing.
    await evictDurableObject(stub(s.sid));
    const t3 = await runTurn(s, [
      [
        { name: "memory_read", arguments: { key: "task" } },
        { name: "memory_read", arguments: { key: "user.name" } },
        { name: "memory_list", arguments: {} },
      ],
    ]);
    t3.results.forEach(expectSuccess);
    expect(t3.results[0].output).toBe("ship it");
    expect(t3.results[1].output).toBe("Ada");
    expect(t3.results[2].output.keys.map((k: any) => k.key)).toEqual(["task", "user.city", "user.name"]);
  });

  it("matches memory_list prefixes literally (no wildcards)", async () => {
    const s = await newSession();
    const run = await runTurn(s, [
      ["a_b", "axb", "a%c", "abc", "A_b"].map((key) => ({ name: "memory_write", arguments: { key, value: key } })),
      [
        { name: "memory_list", arguments: { prefix: "a_" } },
        { name: "memory_list", arguments: { prefix: "a%" } },
        { name: "memory_list", arguments: { prefix: "zzz" } },
      ],
    ]);
    run.results.forEach(expectSuccess);
    expect(run.results[5].output.keys.map((k: any) => k.key)).toEqual(["a_b"]);
    expect(run.results[6].output.keys.map((k: any) => k.key)).toEqual(["a%c"]);
    expect(run.results[7].output).toEqual({ keys: [] });
  });

  it("keeps one session's memory invisible to another", async () => {
    const a = await newSession();
    const b = await newSession();
    expectSuccess((await runTurn(a, [[{ name: "memory_write", arguments: { key: "secret", value: "a's" } }]])).results[0]);
    const run = await runTurn(b, [
      [
        { name: "memory_read", arguments: { key: "secret" } },
        { name: "memory_list", arguments: {} },
      ],
    ]);
    expectError(run.results[0], /Nothing is stored under "secret"/);
    expect(run.results[1].output).toEqual({ keys: [] });
    // a still has it.
    expect((await runTurn(a, [[{ name: "memory_read", arguments: { key: "secret" } }]])).results[0].output).toBe("a's");
  });

  it("refuses bad keys and values: schema errors and values over 100,000 bytes", async () => {
    const s = await newSession();
    const run = await runTurn(s, [
      [
        { name: "memory_write", arguments: { key: "", value: "x" } },
        { name: "memory_write", arguments: { key: "k".repeat(257), value: "x" } },
        { name: "memory_write", arguments: { key: "n", value: 5 } },
        { name: "memory_write", arguments: { key: 5, value: "x" } },
        { name: "memory_write", arguments: { key: "big", value: "é".repeat(50_001) } },
        { name: "memory_read", arguments: {} },
        { name: "memory_list", arguments: { prefix: 1 } },
      ],
      [{ name: "memory_list", arguments: {} }],
    ]);
    for (const r of run.results.slice(0, 4)) expectError(r, /Invalid arguments for "memory_write"/);
    expectError(run.results[4], /larger than 100000 bytes/);
    expectError(run.results[5], /Invalid arguments for "memory_read"/);
    expectError(run.results[6], /Invalid arguments for "memory_list"/);
    expectSuccess(run.results[7]);
    expect(run.results[7].output).toEqual({ keys: [] });
  });

  it("accepts a value of exactly 100,000 bytes", async () => {
    const s = await newSession();
    const value = "é".repeat(50_000);
    const run = await runTurn(s, [[{ name: "memory_write", arguments: { key: "big", value } }], [{ name: "memory_list", arguments: {} }]]);
    run.results.forEach(expectSuccess);
    expect(run.results[1].output).toEqual({ keys: [{ key: "big", bytes: 100_000 }] });
  });
});

describe("http_fetch", () => {
  it("GETs an allowlisted URL and returns status, content type and body", async () => {
    const s = await newSession();
    const target = uniqueId("fetched");
    await script(target, [{ text: "hello" }]);
    // Record one request against `target` so its log has content.
    const posted = await fetch(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: target, messages: [{ role: "user", content: "marker-123" }] }),
    });
    await posted.text();
    const url = `${baseURL}/_scripts/${target}/requests`;
    const expectedBody = await (await fetch(url)).text();
    const run = await runTurn(s, [
      [
        { name: "http_fetch", arguments: { url } },
        { name: "http_fetch", arguments: { url: `${baseURL}/no-such-route` } },
      ],
    ]);
    const [ok, notFound] = run.results;
    expectSuccess(ok);
    expect(ok.output).toEqual({ status: 200, content_type: "application/json", body: expectedBody });
    expect(JSON.parse(ok.output.body)[0].messages[0].content).toBe("marker-123");
    // An HTTP error status is the page's answer, not a tool failure.
    expectSuccess(notFound);
    expect(notFound.output).toMatchObject({ status: 404, content_type: "application/json" });
    // The model received the result.
    const okId = run.log.find((e) => e.type === "tool.result" && e.payload === ok).tool_call_id;
    expect(JSON.parse(toolMessages(run, 0).get(okId)!)).toEqual(ok.output);
  });

  it("refuses URLs outside TOOL_URL_ALLOWLIST at call time", async () => {
    const s = await newSession();
    const target = uniqueId("never-fetched");
    await script(target, [{ text: "unused" }]);
    const bad = [
      "https://example.com/",
      "http://127.0.0.1:1/x",
      `http://u:p@127.0.0.1:${PORT}/v1/_scripts/${target}/requests`,
      `http://u@127.0.0.1:${PORT}/v1/_scripts/${target}/requests`,
      `https://127.0.0.1:${PORT}/v1/_scripts/${target}/requests`,
      `http://localhost:${PORT}/v1/_scripts/${target}/requests`,
      `http://127.0.0.1:${PORT}.evil.example/`,
      `http://127.0.0.1@evil.example:${PORT}/`,
      "file:///etc/passwd",
      "ftp://127.0.0.1/",
      "not a url",
      "",
    ];
    // Each refusal names the URL; none reached the network (the check runs before any fetch, so the
    // unreachable "http://127.0.0.1:1/x" is refused as not allowed, not as a connection error).
    const run = await runTurn(s, [bad.map((url) => ({ name: "http_fetch", arguments: { url } }))]);
    for (const [i, r] of run.results.entries()) {
      expectError(r, /^URL is not allowed/);
      expect(r.output, bad[i]).toContain(`URL is not allowed: ${bad[i]}`);
    }
    expect([...toolMessages(run, 0).values()].every((c) => c.startsWith("URL is not allowed"))).toBe(true);
  });

  it("refuses a url that is not a string by schema validation", async () => {
    const s = await newSession();
    const run = await runTurn(s, [
      [
        { name: "http_fetch", arguments: { url: 5 } },
        { name: "http_fetch", arguments: {} },
        { name: "http_fetch", arguments: { url: `${baseURL}/x`, method: "POST" } },
      ],
    ]);
    for (const r of run.results) expectError(r, /Invalid arguments for "http_fetch"/);
  });

  it("cuts a response body at 100,000 bytes", async () => {
    const s = await newSession();
    // A script whose request log is ~150 kB: one recorded request with a large message.
    const bulk = uniqueId("bulk");
    await script(bulk, [{ text: "ok" }]);
    const posted = await fetch(`${baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: bulk, messages: [{ role: "user", content: "x".repeat(150_000) }] }),
    });
    await posted.text();
    const url = `${baseURL}/_scripts/${bulk}/requests`;
    const full = await (await fetch(url)).text();
    expect(bytes(full)).toBeGreaterThan(150_000);

    const run = await runTurn(s, [[{ name: "http_fetch", arguments: { url } }]]);
    const r = run.results[0];
    expectSuccess(r);
    // What http_fetch returns: the body's first 100,000 bytes (all ASCII here).
    const expected = { status: 200, content_type: "application/json", body: full.slice(0, 100_000) };
    // That is over max_tool_result_bytes (50,000), so the result spilled to an artifact and the model saw a
    // preview; the artifact holds the whole result, which proves the body was cut at exactly 100,000 bytes.
    const artifactId = r.metadata.offloaded_artifact_id;
    expect(artifactId, JSON.stringify(r.metadata)).toMatch(/^art_/);
    expect(r.output).toContain(`${bytes(JSON.stringify(expected))} bytes in all`);
    const artifact = await api("GET", `/v1/sessions/${s.sid}/artifacts/${artifactId}`);
    expect(artifact.status).toBe(200);
    expect(artifact.body).toEqual(expected);
    expect(artifact.body.body).toHaveLength(100_000);
  });
});

describe("permission classes and policy", () => {
  it("declares each tool's class; GET .../tools and the catalog list them", async () => {
    const s = await newSession();
    const res = await api("GET", `/v1/sessions/${s.sid}/tools`);
    expect(res.status).toBe(200);
    const classes = Object.fromEntries(res.body.tools.map((t: any) => [t.name, t.permission_class]));
    expect(classes).toEqual({
      workspace_read: "knowledge",
      workspace_list: "knowledge",
      memory_read: "knowledge",
      memory_list: "knowledge",
      workspace_write: "workspace_write",
      memory_write: "workspace_write",
      http_fetch: "network",
    });
    const byName = new Map<string, any>(res.body.tools.map((t: any) => [t.name, t]));
    expect(byName.get("workspace_write").lock).toBe("workspace");
    expect(byName.get("memory_write").lock).toBe("memory");
    for (const t of byName.values()) {
      expect(t.parallel_safe).toBe(true);
      expect(t.parameters.type).toBe("object");
    }
  });

  it("a policy of safe+knowledge hides the write and network tools; calls to them are never executed", async () => {
    const s = await newSession({ policy: { classes: ["safe", "knowledge"] } });
    const res = await api("GET", `/v1/sessions/${s.sid}/tools`);
    expect(res.status).toBe(200);
    expect(res.body.tools.map((t: any) => t.name).sort()).toEqual(["memory_list", "memory_read", "workspace_list", "workspace_read"]);

    const target = uniqueId("hidden-fetch");
    await script(target, [{ text: "unused" }]);
    const run = await runTurn(s, [
      [
        { name: "workspace_write", arguments: { path: "a.txt", content: "x" } },
        { name: "memory_write", arguments: { key: "k", value: "v" } },
        { name: "http_fetch", arguments: { url: `${baseURL}/_scripts/${target}/requests` } },
      ],
      [
        { name: "workspace_list", arguments: {} },
        { name: "memory_list", arguments: {} },
        { name: "memory_read", arguments: { key: "k" } },
      ],
    ]);
    const [write, mem, net, list, memList, memRead] = run.results;
    for (const r of [write, mem, net]) expectError(r, UNAVAILABLE);
    expectSuccess(list);
    expect(list.output).toEqual({ files: [] });
    expectSuccess(memList);
    expect(memList.output).toEqual({ keys: [] });
    expectError(memRead, /Nothing is stored/);
    expect(await sessionKeys(s.sid)).toEqual([]);

    // Neither the catalog nor the model saw the hidden tools.
    const catalog = run.log.find((e) => e.type === "tool.catalog.resolved" && e.turn_id === run.turnId);
    expect(catalog.payload.tools.map((t: any) => t.name).sort()).toEqual(["memory_list", "memory_read", "workspace_list", "workspace_read"]);
    expect(run.modelRequests[0].tools.map((t: any) => t.function.name).sort()).toEqual(["memory_list", "memory_read", "workspace_list", "workspace_read"]);
  });

  it("an empty class list exposes none of the built-ins", async () => {
    const s = await newSession({ policy: { classes: [] } });
    const res = await api("GET", `/v1/sessions/${s.sid}/tools`);
    expect(res.status).toBe(200);
    expect(res.body.tools).toEqual([]);
    const run = await runTurn(s, [[{ name: "workspace_read", arguments: { path: "a.txt" } }]]);
    expectError(run.results[0], UNAVAILABLE);
  });

  it("only the agent's own tools are exposed, whatever the policy allows", async () => {
    const s = await newSession({ tools: ["workspace_read"] });
    const res = await api("GET", `/v1/sessions/${s.sid}/tools`);
    expect(res.body.tools.map((t: any) => t.name)).toEqual(["workspace_read"]);
    const run = await runTurn(s, [[{ name: "workspace_write", arguments: { path: "a.txt", content: "x" } }]]);
    expectError(run.results[0], UNAVAILABLE);
    expect(await sessionKeys(s.sid)).toEqual([]);
    // events() is only used to make sure the log stays consistent after the refused call.
    expectGapless(await events(s.sid));
  });
});
