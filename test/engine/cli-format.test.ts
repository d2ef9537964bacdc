// The command line's pure parts (src/client): argument parsing and the formatting of cards, prompts, trees and
// the waterfall. No worker is needed, so they run in Node; the commands against the worker: test/client/cli.test.ts.
import { describe, expect, it } from "vitest";
import {
  approvalPrompt,
  ChatRenderer,
  callLabel,
  errorLine,
  formatTree,
  formatWaterfall,
  oneLine,
  parseApproval,
  parseArgs,
  RuntimeError,
  type RuntimeEvent,
  toolCard,
  UsageError,
} from "../../src/client";

describe("the command line's pure parts", () => {
  it("draws a waterfall: parallel calls side by side, a wait on a person shaded, an open span running until now", () => {
    const ids = { trace_id: "t".repeat(32), session_id: "ses_w", thread_id: "ses_w", turn_id: "trn_w", schema_version: 1 as const };
    let sequence = 0;
    const at = (timestamp: number, span_id: string, parent_span_id: string | null, type: string, payload: unknown, more: object = {}) =>
      ({ ...ids, ...more, event_id: `evt_${++sequence}`, sequence, timestamp, span_id, parent_span_id, type, payload }) as RuntimeEvent;
    const events = [
      at(0, "turn", null, "turn.started", { agent: "ops", model: "m" }),
      at(0, "m1", "turn", "model.requested", { model: "m", phase: "main", step: 1 }),
      at(100, "m1", "turn", "model.completed", { finish_reason: "tool-calls", usage: { input_tokens: 1, output_tokens: 1 } }),
      at(100, "a", "turn", "tool.started", { name: "lookup", args: {}, injected_args: {} }),
      at(100, "b", "turn", "action.required", { kind: "tool_approval", tool_name: "deploy", args: {}, injected_args: {}, expires_at: 1e9 }),
      at(300, "b", "turn", "action.resolved", { decision: "approved", tool_name: "deploy", by: "k", reason: null }),
      at(300, "b", "turn", "tool.started", { name: "deploy", args: {}, injected_args: {} }),
      at(200, "a", "turn", "tool.result", { name: "lookup", output: 1, is_error: false, metadata: { status: "success", execution_time_ms: 100 } }),
      at(400, "b", "turn", "tool.result", { name: "deploy", output: 1, is_error: false, metadata: { status: "success", execution_time_ms: 100 } }),
    ];
    expect(formatWaterfall(events, 8, 800)).toBe(
      [
        "turn ops      |████████| 800 ms (running)",
        "  model m     |█       | 100 ms",
        "  tool lookup | █      | 100 ms",
        "  tool deploy | ░░█    | 300 ms (waited 200 ms for a person)",
        "",
      ].join("\n"),
    );
  });

  it("parses arguments", () => {
    expect(parseArgs(["chat", "--url", "http://x", "--key=k", "--agent", "a"])).toEqual({
      positionals: ["chat"],
      flags: { url: "http://x", key: "k", agent: "a" },
    });
    expect(parseArgs(["events", "ses_1", "--after", "5", "--follow"])).toEqual({ positionals: ["events", "ses_1"], flags: { after: "5", follow: true } });
    expect(parseArgs(["agents", "put", "--", "--odd-file.json"])).toEqual({ positionals: ["agents", "put", "--odd-file.json"], flags: {} });
    expect(() => parseArgs(["--agent"])).toThrow(UsageError);
    expect(() => parseArgs(["--agent", "--key", "k"])).toThrow("--agent needs a value");
    expect(() => parseArgs(["--follow=yes"])).toThrow("--follow takes no value");
    expect(() => parseArgs(["--nope"])).toThrow("unknown option --nope");
  });

  it("formats cards, prompts, approvals and errors", () => {
    expect(oneLine("a\n  b\tc", 10)).toBe("a b c");
    expect(oneLine("x".repeat(20), 10)).toBe(`${"x".repeat(9)}…`);
    expect(oneLine({ a: [1, 2] }, 50)).toBe('{"a":[1,2]}');
    expect(callLabel("clock", {})).toBe("clock()");
    expect(toolCard("calculator", { expression: "2+2" }, "4", false)).toBe('⚙ calculator({"expression":"2+2"}) → 4');
    expect(toolCard("http_fetch", { url: "u" }, "HTTP 500", true)).toBe('⚙ http_fetch({"url":"u"}) → ✗ HTTP 500');
    expect(approvalPrompt("deploy", { env: "prod" }, 1)).toBe('  ? allow deploy({"env":"prod"})? [y/N] ');
    expect(["y", "YES ", "", "n", "no", "what"].map(parseApproval)).toEqual(["approve", "approve", "reject", "reject", "reject", null]);
    expect(errorLine(new RuntimeError(422, "validation_failed", "Validation failed: x: bad"))).toBe(
      "agent-runtime: error: Validation failed: x: bad (422 validation_failed)",
    );
    expect(errorLine(new UsageError("missing --key"))).toBe("agent-runtime: missing --key (see --help)");
  });

  it("renders parallel calls, a card interrupted by text, outcomes, and colors only when asked", () => {
    const ev = (type: string, payload: Record<string, unknown>, extra: Partial<RuntimeEvent> = {}) =>
      ({ type, payload, depth: 0, ...extra }) as unknown as RuntimeEvent;
    const r = new ChatRenderer();
    const out = [
      ev("turn.started", {}),
      ev("model.delta", { text: "Checking both." }),
      ev("tool.started", { name: "clock", args: {} }, { tool_call_id: "a" }),
      ev("tool.started", { name: "calculator", args: { expression: "1+1" } }, { tool_call_id: "b" }),
      ev("tool.result", { name: "calculator", output: "2", is_error: false }, { tool_call_id: "b" }),
      ev("tool.result", { name: "clock", output: { iso: "2026-01-01T00:00:00Z" }, is_error: false }, { tool_call_id: "a" }),
      ev("budget.exceeded", { reason: "tool_calls", limit: 2, observed: 3 }),
      ev("turn.failed", { error: { code: "budget_exceeded", message: "too many tool calls" } }),
    ]
      .map((e) => r.render(e))
      .join("");
    expect(out).toBe(
      [
        "Checking both.",
        "⚙ clock()",
        '⚙ calculator({"expression":"1+1"}) → 2',
        '⚙ clock() → {"iso":"2026-01-01T00:00:00Z"}',
        "! budget exceeded: tool_calls (3 > 2)",
        "✗ turn failed: budget_exceeded: too many tool calls",
        "",
      ].join("\n"),
    );

    // A structured answer (nothing streamed) is printed whole; a non-final stop is named.
    const s = new ChatRenderer();
    expect(s.render(ev("turn.completed", { output: { ok: true }, stop_reason: "max_steps" }))).toBe('{\n  "ok": true\n}\n[stopped: max_steps]\n');
    const c = new ChatRenderer({ color: true });
    expect(c.render(ev("tool.started", { name: "clock", args: {} }, { tool_call_id: "x" }))).toBe("\x1b[36m⚙ clock()\x1b[0m");
    expect(
      formatTree({
        nodes: [{ id: "1", parent_id: null, name: "clock", args_preview: "{}", result_preview: null, is_error: false, duration_ms: null, children: [] }],
      }),
    ).toBe("⚙ clock() … running\n");
    expect(formatTree({ nodes: [] })).toBe("(no tool calls)\n");
  });
});
