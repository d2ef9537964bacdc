// The command line (src/client/cli.ts) inside workerd. A child process cannot run here, so the commands run
// in-process with scripted terminal I/O (typed lines, y/n answers, Ctrl-C) against the real worker; only the
// Node glue in bin/agent-runtime.mjs (readline, signals, esbuild) is outside, and was checked by hand
// (docs/client.md). Argument parsing and the pure formatting: test/engine/cli-format.test.ts.
import { SELF } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { type CliDeps, type CliIO, EXIT, RuntimeClient, RuntimeError, type RuntimeEvent, runCli, type WebSocketLike } from "../../src/client";
import { api, declaredFetch, KEY } from "../support/api";
import { type Step, script, toolURL, uniqueId } from "../support/fake-model";

const BASE = "https://runtime.test";
const sockets: WebSocket[] = [];

const deps: CliDeps = {
  fetch: declaredFetch,
  backoff: { initialMs: 5, maxMs: 40 },
  WebSocket: async (url: string): Promise<WebSocketLike> => {
    const res = await SELF.fetch(url.replace(/^ws/, "http"), { headers: { Upgrade: "websocket" } });
    if (!res.webSocket) throw await RuntimeError.fromResponse(res);
    res.webSocket.accept();
    sockets.push(res.webSocket);
    return res.webSocket as unknown as WebSocketLike;
  },
};

afterEach(() => {
  for (const s of sockets.splice(0)) {
    try {
      s.close();
    } catch {
      // closed
    }
  }
});

/** What a user types: a line, end of input (null), or a function of the prompt (it may wait, or press Ctrl-C). */
type Answer = string | null | ((io: ScriptedIO, prompt: string, signal?: AbortSignal) => Promise<string | null>);

/** A terminal driven by a script: records stdout (prompts included) and stderr. */
class ScriptedIO implements CliIO {
  out = "";
  err = "";
  readonly prompts: string[] = [];
  readonly files = new Map<string, string>();
  private readonly handlers = new Set<() => void>();
  env: Record<string, string | undefined> = {};

  constructor(private readonly answers: Answer[] = []) {}

  stdout(text: string): void {
    this.out += text;
  }
  stderr(text: string): void {
    this.err += text;
  }
  async question(prompt: string, signal?: AbortSignal): Promise<string | null> {
    this.out += prompt;
    this.prompts.push(prompt);
    if (signal?.aborted) return null;
    // Like readline, an aborted question ends its prompt's line.
    const endLine = () => {
      this.out += "\n";
    };
    signal?.addEventListener("abort", endLine, { once: true });
    try {
      const next = this.answers.shift();
      if (next === undefined || next === null) return null;
      if (typeof next === "string") {
        this.out += `${next}\n`;
        return next;
      }
      return await next(this, prompt, signal);
    } finally {
      signal?.removeEventListener("abort", endLine);
    }
  }
  async readFile(path: string): Promise<string> {
    const text = this.files.get(path);
    if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    return text;
  }
  onInterrupt(handler: () => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
  /** Ctrl-C. */
  interrupt(): void {
    for (const h of [...this.handlers]) h();
  }
}

/** An answer that waits until `signal` aborts (a question the user never answers). */
const never = async (_io: ScriptedIO, _p: string, signal?: AbortSignal) =>
  new Promise<string | null>((resolve) => signal?.addEventListener("abort", () => resolve(null), { once: true }));

async function until(probe: () => boolean, what: string, timeoutMs = 8000, refresh?: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await refresh?.();
    if (probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const client = new RuntimeClient({ url: BASE, key: KEY, fetch: deps.fetch, WebSocket: deps.WebSocket });

/** Registers an agent on the fake model with `steps`; returns its name. */
async function scriptedAgent(steps: Step[], config: Record<string, unknown> = {}): Promise<string> {
  const id = uniqueId("cli");
  await script(id, steps);
  const name = `cli-${crypto.randomUUID().slice(0, 8)}`;
  await client.putAgent(name, { model: `openai-compatible:${id}`, ...config });
  return name;
}

const cli = (args: string[], io: ScriptedIO) => runCli(["--url", BASE, "--key", KEY, ...args], io, deps);

const sessionOf = (io: ScriptedIO) => /session (ses_[0-9a-z]+)/.exec(io.out)?.[1];

describe("chat", () => {
  it("streams the answer and shows a tool call as one card", async () => {
    const agent = await scriptedAgent(
      [
        { text: "Let me compute. ", tool_calls: [{ name: "calculator", arguments: { expression: "6 * 7" } }] },
        { text: "It is 42.", chunk_size: 3 },
      ],
      { tools: ["calculator"] },
    );
    const io = new ScriptedIO(["what is 6 * 7?", null]);
    expect(await cli(["chat", "--agent", agent], io)).toBe(EXIT.ok);
    expect(io.err).toBe("");
    const sid = sessionOf(io)!;
    expect(io.out).toBe(
      `${[
        `session ${sid} (agent ${agent}); resume it with --session ${sid}`,
        "> what is 6 * 7?",
        "Let me compute. ",
        '⚙ calculator({"expression":"6 * 7"}) → 42',
        "It is 42.",
        "> ",
      ].join("\n")}\n`,
    );
  });

  it("asks y/n for an approval, and runs the tool when approved", async () => {
    const agent = await scriptedAgent(
      [
        { text: "Deploying.", tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] },
        { text: "Deployed." },
        { tool_calls: [{ name: "deploy", arguments: { env: "dev" } }] },
        { text: "Skipped." },
      ],
      {
        http_tools: [{ name: "deploy", url: toolURL("echo"), parameters: { type: "object", properties: { env: { type: "string" } } } }],
        hitl_tools: ["deploy"],
      },
    );
    const io = new ScriptedIO(["deploy to prod", "maybe", "y", "and dev", "n", null]);
    expect(await cli(["chat", "--agent", agent], io)).toBe(EXIT.ok);
    expect(io.err).toBe("");
    const lines = io.out.split("\n");
    const from = lines.indexOf("> deploy to prod");
    expect(lines.slice(from, from + 12)).toEqual([
      "> deploy to prod",
      "Deploying.",
      '? allow deploy({"env":"prod"})? [y/N] maybe', // not an answer: asked again
      '? allow deploy({"env":"prod"})? [y/N] y',
      "✓ deploy approved",
      expect.stringMatching(/^⚙ deploy\(\{"env":"prod"\}\) → \{"received":\{"tool":"deploy","args":\{"env":"prod"\},"session_id":"ses_/),
      "Deployed.",
      "> and dev",
      '? allow deploy({"env":"dev"})? [y/N] n',
      "✗ deploy rejected",
      expect.stringMatching(/^⚙ deploy\(…\) → ✗ /),
      "Skipped.",
    ]);
    expect(lines.slice(-2)).toEqual(["> ", ""]);
  });

  it("asks an ask_user question at the prompt: a choice, a typed answer the server refuses (asked again), and a declined one", async () => {
    const agent = await scriptedAgent(
      [
        { tool_calls: [{ name: "ask_user", arguments: { question: "Which size?", choices: ["S", "M", "L"] } }] },
        { tool_calls: [{ name: "ask_user", arguments: { question: "How many?", response_schema: { type: "integer", minimum: 1 } } }] },
        { tool_calls: [{ name: "ask_user", arguments: { question: "Gift note?" } }] },
        { text: "Ordered." },
      ],
      { tools: ["ask_user"] },
    );
    const io = new ScriptedIO(["order a shirt", "XL", "m", "lots", "0", "2", "", null]);
    expect(await cli(["chat", "--agent", agent], io)).toBe(EXIT.ok);
    expect(io.err).toBe("");
    const lines = io.out.split("\n");
    const asked = lines.filter((l) => l.startsWith("? ") || l.startsWith("✓") || l.startsWith("agent-runtime:"));
    expect(asked).toEqual([
      "? Which size? [S/M/L] XL", // not a choice: asked again
      "? Which size? [S/M/L] m",
      '✓ answered: "M"',
      "? How many? (integer) lots", // not a number: asked again
      "? How many? (integer) 0",
      "agent-runtime: error: Validation failed: response: 0 is less than 1. (422 validation_failed)", // the server's 422, then asked again
      "? How many? (integer) 2",
      "✓ answered: 2",
      "? Gift note? ",
    ]);
    expect(lines).toContain("✗ ask_user rejected (declined at the command line)");
    expect(lines.slice(-3)).toEqual(["Ordered.", "> ", ""]);
    const log = await client.eventsPage(sessionOf(io)!, { limit: 1000 });
    expect(log.events.filter((e) => e.type === "tool.result").map((e) => (e.payload as { output: unknown }).output)).toEqual([
      "M",
      2,
      { status: "rejected", message: expect.stringContaining("declined at the command line") },
    ]);
  });

  it("nests a sub-agent's tool calls under the run_subtask card", async () => {
    const agent = await scriptedAgent(
      [
        {
          text: "Delegating.",
          tool_calls: [{ name: "run_subtask", arguments: { title: "Multiply", instructions: "6 * 7 with the calculator", tools: ["calculator"] } }],
        },
        { tool_calls: [{ name: "calculator", arguments: { expression: "6 * 7" } }] },
        { text: "The product is 42." },
        { text: "The sub-agent found 42." },
      ],
      { tools: ["run_subtask", "calculator"] },
    );
    const io = new ScriptedIO(["delegate 6 * 7", null]);
    expect(await cli(["chat", "--agent", agent], io)).toBe(EXIT.ok);
    const lines = io.out.split("\n");
    const from = lines.indexOf("> delegate 6 * 7");
    expect(lines.slice(from + 1)).toEqual([
      "Delegating.",
      '⚙ run_subtask({"title":"Multiply","instructions":"6 * 7 with the calculat…)',
      '  ⚙ calculator({"expression":"6 * 7"}) → 42',
      "⚙ run_subtask(…) → The product is 42.",
      "The sub-agent found 42.",
      "> ",
      "",
    ]);

    // The tree command shows the same nesting, from the log.
    const sid = sessionOf(io)!;
    const turnId = (await client.getSession(sid)).turns[0]!.turn_id;
    const tree = new ScriptedIO();
    expect(await cli(["tree", sid, turnId], tree)).toBe(EXIT.ok);
    expect(tree.out).toMatch(
      /^⚙ run_subtask "Multiply"\(\{"title":"Multiply",.*\) → The product is 42\. \(\d+ ms\)\n {2}⚙ calculator\(\{"expression":"6 \* 7"\}\) → 42 \(\d+ ms\)\n$/,
    );
    const json = new ScriptedIO();
    expect(await cli(["tree", sid, turnId, "--json"], json)).toBe(EXIT.ok);
    expect(JSON.parse(json.out)).toEqual(await client.tree(sid, turnId));

    // The timeline command: the turn's waterfall (the spans of the OTLP export), the sub-agent's calls under it.
    const timeline = new ScriptedIO();
    expect(await cli(["timeline", sid, turnId], timeline)).toBe(EXIT.ok);
    const rows = timeline.out.trimEnd().split("\n");
    expect(
      rows.map((r) =>
        r
          .split(" |")[0]!
          .trimEnd()
          .replace(/openai-compatible:\S+/, "M"),
      ),
    ).toEqual([`turn ${agent}`, "  model M", "  tool run_subtask", "  agent Multiply", "    model M", "    tool calculator", "    model M", "  model M"]);
    for (const r of rows) expect(r).toMatch(/ \|[█ ]{40}\| \d+ ms$/);
    const missing = new ScriptedIO();
    expect(await cli(["timeline", sid, "trn_nothing"], missing)).toBe(EXIT.usage);
    expect(missing.err).toContain(`session ${sid} has no turn trn_nothing`);
  });

  it("Ctrl-C interrupts the running turn; the chat goes on", async () => {
    const agent = await scriptedAgent([{ text: "thinking very hard", hang: true }, { text: "fresh answer" }]);
    const io = new ScriptedIO(["think", "again", null]);
    const done = cli(["chat", "--agent", agent], io);
    await until(() => io.out.includes("think\n") && /thin/.test(io.out.split("> think\n")[1] ?? ""), "the streamed text");
    io.interrupt();
    expect(await done).toBe(EXIT.ok);
    const after = io.out.split("> think\n")[1]!;
    expect(after).toMatch(
      /^thin.*\n\^C interrupting the turn… \(Ctrl-C again to exit\)\n⏹ turn cancelled \(interrupted from the command line\)\n> again\nfresh answer\n> \n$/s,
    );
    const sid = sessionOf(io)!;
    expect((await client.getSession(sid)).turns.map((t) => t.status)).toEqual(["cancelled", "completed"]);
  });

  it("a second Ctrl-C during a turn exits with 130; Ctrl-C twice at the prompt exits too", async () => {
    const agent = await scriptedAgent([{ text: "slow", hang: true }]);
    const io = new ScriptedIO(["go"]);
    const done = cli(["chat", "--agent", agent], io);
    await until(() => io.out.includes("> go\nslo"), "the streamed text");
    io.interrupt();
    io.interrupt();
    expect(await done).toBe(EXIT.interrupted);

    const idle = new ScriptedIO([never]);
    const waiting = cli(["chat", "--agent", agent], idle);
    await until(() => idle.prompts.length === 1, "the prompt");
    idle.interrupt();
    expect(idle.out).toContain("^C (Ctrl-C again or Ctrl-D to exit)");
    idle.interrupt();
    expect(await waiting).toBe(EXIT.interrupted);
  });

  it("Ctrl-C while an approval is asked withdraws the question and interrupts the turn", async () => {
    const agent = await scriptedAgent([{ tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] }], {
      http_tools: [{ name: "deploy", url: toolURL("echo") }],
      hitl_tools: ["deploy"],
    });
    const io = new ScriptedIO([
      "deploy",
      async (me, _p, signal) => {
        setTimeout(() => me.interrupt(), 10);
        return never(me, _p, signal);
      },
      null,
    ]);
    expect(await cli(["chat", "--agent", agent], io)).toBe(EXIT.ok);
    const after = io.out.split("> deploy\n")[1]!;
    expect(after).toBe(
      `${[
        '? allow deploy({"env":"prod"})? [y/N] ',
        "^C interrupting the turn… (Ctrl-C again to exit)",
        "✗ deploy rejected (the turn was cancelled)",
        "⏹ turn cancelled (interrupted from the command line)",
        "> ",
      ].join("\n")}\n`,
    );
  });

  it("--session resumes a session, attaching to its running turn and asking its pending approval", async () => {
    const agent = await scriptedAgent(
      [{ tool_calls: [{ name: "deploy", arguments: { env: "prod" } }] }, { text: "Deployed after all." }, { text: "Hello again." }],
      {
        http_tools: [{ name: "deploy", url: toolURL("echo") }],
        hitl_tools: ["deploy"],
      },
    );
    const { session_id: sid } = await client.createSession({ agent });
    const { turn_id } = await client.submitTurn(sid, "deploy");
    let status = "";
    await until(
      () => status === "waiting_permission",
      "the approval",
      8000,
      async () => void (status = (await client.getThread(sid)).status),
    );

    const io = new ScriptedIO(["y", "hi", null]);
    expect(await cli(["chat", "--session", sid], io)).toBe(EXIT.ok);
    expect(io.out).toMatch(
      new RegExp(
        `^session ${sid} \\(agent ${agent}, 1 turn so far\\)\\nattaching to the running turn ${turn_id}\\n\\? allow deploy\\(\\{"env":"prod"\\}\\)\\? \\[y/N\\] y\\n✓ deploy approved\\n⚙ deploy\\(\\{"env":"prod"\\}\\) → .*\\nDeployed after all\\.\\n> hi\\nHello again\\.\\n> \\n$`,
      ),
    );
  });

  it("--on-busy interrupt: a message typed while another client's turn runs supersedes it; a bad strategy is a usage error", async () => {
    const agent = await scriptedAgent([{ hang: true, text: "a long answer", chunk_size: 1000 }, { text: "Hi." }]);
    let running = "";
    // The user types while a turn started elsewhere (another client) is running.
    const typeWhileBusy = async (io: ScriptedIO) => {
      const sid = sessionOf(io)!;
      running = (await client.submitTurn(sid, "a long question")).turn_id;
      let streamed = false;
      await until(
        () => streamed,
        "the other turn's text",
        8000,
        async () => void (streamed = (await client.eventsPage(sid)).events.some((e) => e.type === "model.delta")),
      );
      io.out += "just say hi\n";
      return "just say hi";
    };
    const io = new ScriptedIO([typeWhileBusy, null]);
    expect(await cli(["chat", "--agent", agent, "--on-busy", "interrupt"], io)).toBe(EXIT.ok);
    expect(io.out).toMatch(/> just say hi\nHi\.\n> \n$/);
    const log = [];
    for await (const e of client.readLog(sessionOf(io)!)) log.push(e);
    const cut = log.find((e) => e.type === "turn.cancelled" && e.turn_id === running);
    expect(cut?.payload).toMatchObject({ reason: "superseded" });

    const usage = new ScriptedIO();
    expect(await cli(["chat", "--agent", agent, "--on-busy", "later"], usage)).toBe(EXIT.usage);
    expect(usage.err).toBe("agent-runtime: --on-busy must be one of enqueue, reject, interrupt, rollback, inject (see --help)\n");
  });

  it("a failing turn prints its error; chat without an agent is a usage error", async () => {
    const agent = await scriptedAgent([{ error: { status: 400, message: "bad request from the provider" } }]);
    const io = new ScriptedIO(["hello", null]);
    expect(await cli(["chat", "--agent", agent], io)).toBe(EXIT.ok);
    expect(io.out).toMatch(/> hello\n✗ turn failed: model_error: .*\n> \n$/);

    const usage = new ScriptedIO();
    expect(await cli(["chat"], usage)).toBe(EXIT.usage);
    expect(usage.err).toBe("agent-runtime: chat needs --agent <name> (a new session) or --session <id> (resume one) (see --help)\n");
  });
});

describe("events, agents, tree and errors", () => {
  it("events prints the log as JSON lines from --after; --follow stays live until Ctrl-C", async () => {
    const agent = await scriptedAgent([{ text: "one two three" }, { text: "four", chunk_size: 1, delay_ms: 20 }]);
    const { session_id: sid } = await client.createSession({ agent });
    await client.submitAndWait(sid, "first");
    const log: RuntimeEvent[] = [];
    for await (const e of client.readLog(sid)) log.push(e);

    const io = new ScriptedIO();
    expect(await cli(["events", sid, "--after", "2"], io)).toBe(EXIT.ok);
    expect(
      io.out
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(log.slice(2));

    const follow = new ScriptedIO();
    const running = cli(["events", sid, "--after=3", "--follow", "--channel", "cli-test"], follow);
    const { turn_id } = await client.submitTurn(sid, "second");
    await until(() => follow.out.split("\n").some((l) => l.includes('"turn.completed"') && l.includes(turn_id)), "the second turn's end");
    follow.interrupt();
    expect(await running).toBe(EXIT.interrupted);
    const all: RuntimeEvent[] = [];
    for await (const e of client.readLog(sid)) all.push(e);
    expect(
      follow.out
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(all.slice(3));
    expect((await client.getSession(sid)).channels.find((c) => c.channel_id === "cli-test")?.acked_sequence).toBe(all.length);
  });

  it("memory set <resource> <file> / get / search", async () => {
    const rid = `cli-user-${crypto.randomUUID().slice(0, 8)}`;
    const set = new ScriptedIO();
    set.files.set("memory.json", JSON.stringify({ units: "metric" }));
    expect(await cli(["memory", "set", rid, "memory.json"], set)).toBe(EXIT.ok);
    expect(JSON.parse(set.out)).toMatchObject({ resource_id: rid, version: 1, document: { units: "metric" } });
    const get = new ScriptedIO();
    expect(await cli(["memory", "get", rid], get)).toBe(EXIT.ok);
    expect(JSON.parse(get.out)).toEqual(JSON.parse(set.out));

    await client.putAgent("cli-memory", { model: "demo:fast" });
    const { session_id } = await client.createSession({ agent: "cli-memory", resource_id: rid });
    const { turn_id } = await client.submitTurn(session_id, { input: "the boat is called Nautilus" });
    await client.waitForTurn(session_id, turn_id);
    const search = new ScriptedIO();
    for (let i = 0; i < 50 && !search.out; i++) {
      await cli(["memory", "search", rid, "nautilus", "--limit", "1"], search);
      if (!search.out) await new Promise((r) => setTimeout(r, 50));
    }
    expect(search.out).toMatch(new RegExp(`^\\d{4}-.*Z  ${session_id} ${turn_id} (user|assistant): .*Nautilus.*\\n$`));
    const bad = new ScriptedIO();
    expect(await cli(["memory", "get"], bad)).toBe(EXIT.usage);
  });

  it("agents put <file> / get / list / delete", async () => {
    const name = `cli-file-${crypto.randomUUID().slice(0, 8)}`;
    const io = new ScriptedIO();
    io.files.set("agent.json", JSON.stringify({ name, model: "demo:fast", tools: ["clock"] }));
    expect(await cli(["agents", "put", "agent.json"], io)).toBe(EXIT.ok);
    const stored = JSON.parse(io.out);
    expect(stored).toMatchObject({ name, model: "demo:fast", tools: ["clock"], max_steps: 10 });

    const get = new ScriptedIO();
    expect(await cli(["agents", "get", name], get)).toBe(EXIT.ok);
    expect(JSON.parse(get.out)).toEqual(stored);
    const list = new ScriptedIO();
    expect(await cli(["agents", "list"], list)).toBe(EXIT.ok);
    expect(JSON.parse(list.out).map((a: { name: string }) => a.name)).toContain(name);

    // The name can come from --name when the file has none.
    const named = new ScriptedIO();
    named.files.set("noname.json", JSON.stringify({ model: "demo:fast" }));
    expect(await cli(["agents", "put", "noname.json", "--name", `${name}-2`], named)).toBe(EXIT.ok);
    const noName = new ScriptedIO();
    noName.files.set("noname.json", JSON.stringify({ model: "demo:fast" }));
    expect(await cli(["agents", "put", "noname.json"], noName)).toBe(EXIT.usage);
    expect(noName.err).toBe('agent-runtime: noname.json has no "name"; pass --name (see --help)\n');

    const del = new ScriptedIO();
    expect(await cli(["agents", "delete", name], del)).toBe(EXIT.ok);
    expect(JSON.parse(del.out)).toEqual({ deleted: true, name });
  });

  it("every error is one line on stderr and a non-zero exit", async () => {
    const cases: [string[], ScriptedIO, number, RegExp][] = [
      [["agents", "get", "does-not-exist"], new ScriptedIO(), EXIT.error, /^agent-runtime: error: Agent 'does-not-exist' was not found \(404 not_found\)\n$/],
      [
        ["tree", "ses_00000000000000000000000000", "trn_x"],
        new ScriptedIO(),
        EXIT.error,
        /^agent-runtime: error: Session .* was not found \(404 not_found\)\n$/,
      ],
      [["agents", "put", "bad.json"], new ScriptedIO(), EXIT.error, /^agent-runtime: error: Validation failed: temperature: .* \(422 validation_failed\)\n$/],
      [["agents", "put", "missing.json"], new ScriptedIO(), EXIT.error, /^agent-runtime: error: ENOENT: no such file or directory, open 'missing.json'\n$/],
      [["agents", "put", "broken.json"], new ScriptedIO(), EXIT.error, /^agent-runtime: error: invalid JSON: .*\n$/],
      [
        ["events", "ses_00000000000000000000000000", "--follow"],
        new ScriptedIO(),
        EXIT.error,
        /^agent-runtime: error: Session .* was not found \(404 not_found\)\n$/,
      ],
      [["events"], new ScriptedIO(), EXIT.usage, /^agent-runtime: missing arguments: events <session> \(see --help\)\n$/],
      [["events", "s", "--after", "-1"], new ScriptedIO(), EXIT.usage, /^agent-runtime: --after must be a non-negative integer \(see --help\)\n$/],
      [["launch"], new ScriptedIO(), EXIT.usage, /^agent-runtime: unknown command "launch" \(see --help\)\n$/],
      [["agents", "get", "x", "--verbose"], new ScriptedIO(), EXIT.usage, /^agent-runtime: unknown option --verbose \(see --help\)\n$/],
    ];
    for (const [args, io, code, line] of cases) {
      io.files.set("bad.json", JSON.stringify({ name: "bad", model: "demo:x", temperature: 9 }));
      io.files.set("broken.json", "{ nope");
      expect(await cli(args, io), args.join(" ")).toBe(code);
      expect(io.err, args.join(" ")).toMatch(line);
      expect(io.out, args.join(" ")).toBe("");
    }

    const wrongKey = new ScriptedIO();
    expect(await runCli(["agents", "list", "--url", BASE, "--key", "nope"], wrongKey, deps)).toBe(EXIT.error);
    expect(wrongKey.err).toBe("agent-runtime: error: Missing or invalid API key (401 unauthorized)\n");

    const noKey = new ScriptedIO();
    expect(await runCli(["agents", "list"], noKey, deps)).toBe(EXIT.usage);
    expect(noKey.err).toBe("agent-runtime: missing --key (or set AGENT_RUNTIME_KEY) (see --help)\n");
    const envKey = new ScriptedIO();
    envKey.env = { AGENT_RUNTIME_URL: BASE, AGENT_RUNTIME_KEY: KEY };
    expect(await runCli(["agents", "list"], envKey, deps)).toBe(EXIT.ok);

    const unreachable = new ScriptedIO();
    const down: CliDeps = { fetch: async () => Promise.reject(new TypeError("fetch failed")) };
    expect(await runCli(["agents", "list", "--url", "http://127.0.0.1:9", "--key", KEY], unreachable, down)).toBe(EXIT.error);
    expect(unreachable.err).toBe("agent-runtime: error: cannot reach http://127.0.0.1:9: GET /v1/agents failed: fetch failed\n");

    const help = new ScriptedIO();
    expect(await runCli(["--help"], help, deps)).toBe(EXIT.ok);
    expect(help.out).toContain("usage: agent-runtime <command>");
    expect(await runCli([], new ScriptedIO(), deps)).toBe(EXIT.usage);
  });
});

describe("eval run", () => {
  it("follows an eval run to its end, a line per scorer; exits 1 when a mean is under --fail-under", async () => {
    const agent = `cli-eval-${crypto.randomUUID().slice(0, 8)}`;
    await client.putAgent(agent, { model: "demo:fast", tools: ["calculator"] });
    const items = [
      { input: "What is 2 + 2?", expected: "The answer is 4." },
      { input: "What is 3 + 3?", expected: "The answer is 7." },
    ];
    const dataset = `cli-${crypto.randomUUID().slice(0, 8)}`;
    expect((await api("PUT", `/v1/datasets/${dataset}`, { items })).status).toBe(201);

    const passing = new ScriptedIO();
    expect(await cli(["eval", "run", agent, "--dataset", dataset, "--scorer", "contains:answer,max_steps:2", "--fail-under", "0.9"], passing)).toBe(EXIT.ok);
    expect(passing.out).toMatch(new RegExp(`^eval run evr_[0-9a-f]{24}: ${agent}@1 on ${dataset}@1, 2 cases\n`));
    expect(passing.out).toContain("contains  mean 1  pass rate 1  (2 cases)\nmax_steps  mean 1  pass rate 1  (2 cases)\ncost 0 USD, mean latency ");

    const failing = new ScriptedIO();
    const scorers = JSON.stringify([{ type: "exact" }, { type: "contains", id: "says", value: "answer" }]);
    expect(await cli(["eval", "run", agent, "--dataset", `${dataset}@1`, "--scorer", scorers, "--fail-under", "0.9"], failing)).toBe(EXIT.error);
    expect(failing.out).toContain("exact  mean 0.5  pass rate 0.5  (2 cases)  under 0.9\nsays  mean 1  pass rate 1  (2 cases)\n");
    expect(failing.out).toMatch(/; failing: exact\n$/);

    const refused = new ScriptedIO();
    expect(await cli(["eval", "run", agent, "--dataset", dataset, "--scorer", "regex:(a)\\1"], refused)).toBe(EXIT.usage);
    expect(refused.err).toMatch(/--scorer: 0\.pattern: .*backreference/i);

    // Checked before anything is sent: an unknown scorer, and a list that is no JSON.
    const unknown = new ScriptedIO();
    expect(await cli(["eval", "run", agent, "--dataset", dataset, "--scorer", "exact,nosuch"], unknown)).toBe(EXIT.usage);
    expect(unknown.err).toMatch(/--scorer: 1\.type: /);
    const notJson = new ScriptedIO();
    expect(await cli(["eval", "run", agent, "--dataset", dataset, "--scorer", "[{"], notJson)).toBe(EXIT.usage);
    expect(notJson.err).toContain("--scorer: not a JSON array");
  });
});
