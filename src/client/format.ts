// Pure text formatting of events for the command line (no I/O): streamed model text, one-line tool cards
// indented by sub-agent depth, approval prompts, turn outcomes and execution trees.
import { type EventTable, ignored, onEvent } from "../protocol/event-table";
import type { RuntimeEvent } from "../protocol/events";
import type { TreeNode } from "../protocol/views";

export interface FormatOptions {
  /** ANSI colors (off unless the output is a terminal). */
  color?: boolean;
  /** Characters of a tool's arguments shown on its card (default 60). */
  argsWidth?: number;
  /** Characters of a tool's result shown on its card (default 80). */
  resultWidth?: number;
}

const ANSI = { dim: "\x1b[2m", red: "\x1b[31m", green: "\x1b[32m", yellow: "\x1b[33m", cyan: "\x1b[36m", reset: "\x1b[0m" } as const;
type Tone = Exclude<keyof typeof ANSI, "reset">;

/** One line of at most `width` characters: whitespace runs become one space, and an overflow ends in "…". */
export function oneLine(value: unknown, width: number): string {
  let text: string;
  if (typeof value === "string") text = value;
  else if (value === undefined) text = "";
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  text = text.replace(/\s+/g, " ").trim();
  return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text;
}

/** `name(args)`: arguments as compact JSON without the outer braces' noise when they are empty. */
export function callLabel(name: string, args: unknown, width = 60): string {
  const empty = args === undefined || args === null || (typeof args === "object" && Object.keys(args as object).length === 0);
  return `${name}(${empty ? "" : oneLine(args, width)})`;
}

/** The whole card on one line: `⚙ name(args) → result` (an error result is marked `✗`). */
export function toolCard(name: string, args: unknown, output: unknown, isError: boolean, opts: FormatOptions = {}): string {
  return `⚙ ${callLabel(name, args, opts.argsWidth ?? 60)} ${resultTail(output, isError, opts)}`;
}

function resultTail(output: unknown, isError: boolean, opts: FormatOptions): string {
  return `→ ${isError ? "✗ " : ""}${oneLine(output, opts.resultWidth ?? 80)}`;
}

export function indent(depth: number | null | undefined): string {
  return "  ".repeat(Math.max(0, depth ?? 0));
}

/** The y/n question for a pending approval (an `action.required` event's tool name, args and depth). */
export function approvalPrompt(toolName: string, args: unknown, depth = 0, opts: FormatOptions = {}): string {
  return `${indent(depth)}? allow ${callLabel(toolName, args, opts.argsWidth ?? 60)}? [y/N] `;
}

/** Parses an answer to the approval prompt: y/yes approve, n/no/empty reject, anything else asks again (null). */
export function parseApproval(answer: string): "approve" | "reject" | null {
  const a = answer.trim().toLowerCase();
  if (a === "y" || a === "yes") return "approve";
  if (a === "" || a === "n" || a === "no") return "reject";
  return null;
}

/**
 * Turns a turn's events into terminal output. Model text of the root agent streams as it comes; a tool call is
 * one line `⚙ name(args) → result`, written when the call starts and finished when its result arrives (if
 * something else was printed in between, the result gets a line of its own). Sub-agents' calls are indented
 * two spaces per level; their text is not streamed (their result is the card's preview).
 */
export class ChatRenderer {
  /** Whether the cursor is in the middle of a line. */
  private midLine = false;
  /** The card whose line is still open, waiting for its result. */
  private openCard: string | null = null;
  private readonly started = new Map<string, { name: string; args: unknown; depth: number }>();
  private streamedText = false;

  constructor(private readonly opts: FormatOptions = {}) {}

  /** The text to write for `e` (possibly empty). */
  render(e: RuntimeEvent): string {
    return onEvent(ChatRenderer.RENDER, e, this, e.depth ?? 0) ?? "";
  }

  private static readonly RENDER: EventTable<[ChatRenderer, number], string> = {
    ...ignored(
      "session.created",
      "session.forked",
      "session.version_changed",
      "turn.submitted",
      "queue.changed",
      "model.requested",
      "model.completed",
      "subagent.spawned",
      "subagent.completed",
    ),
    "turn.started": (_e, r) => {
      r.streamedText = false;
      return "";
    },
    "model.delta": (e, r, depth) => {
      if (depth > 0 || e.payload.text === "") return "";
      const text = r.closeCard() + e.payload.text;
      r.streamedText = true;
      r.midLine = !text.endsWith("\n");
      return text;
    },
    "tool.started": (e, r, depth) => {
      const id = e.tool_call_id ?? e.event_id;
      r.started.set(id, { name: e.payload.name, args: e.payload.args, depth });
      const out = `${r.lineStart()}${indent(depth)}${r.tone("cyan", `⚙ ${callLabel(e.payload.name, e.payload.args, r.opts.argsWidth ?? 60)}`)}`;
      r.openCard = id;
      r.midLine = true;
      return out;
    },
    "tool.result": (e, r, depth) => {
      const id = e.tool_call_id ?? "";
      const tail = r.tone(e.payload.is_error ? "red" : "dim", resultTail(e.payload.output, e.payload.is_error, r.opts));
      if (r.openCard === id && r.midLine) {
        r.openCard = null;
        r.midLine = false;
        return ` ${tail}\n`;
      }
      // Something came in between (or the call never started: a refused approval): a full card of its own.
      // A call whose card was printed already shows its arguments as "…".
      const s = r.started.get(id);
      const label = s ? `${s.name}(${s.args && Object.keys(s.args as object).length > 0 ? "…" : ""})` : `${e.payload.name}()`;
      return r.line(depth, `${r.tone("cyan", `⚙ ${label}`)} ${tail}`);
    },
    "action.required": (e, r, depth) => {
      // The question itself is asked by the caller (approvalPrompt); here only the line is ended. A refused
      // call never starts, so its result card finds its name here.
      if (e.tool_call_id) r.started.set(e.tool_call_id, { name: e.payload.tool_name, args: e.payload.args, depth });
      return r.lineStart();
    },
    "action.approval.recorded": (e, r, depth) => {
      const { tool_name, by, approvals, approvals_required } = e.payload;
      return r.line(depth, r.tone("green", `✓ ${tool_name} approved by ${by} (${approvals} of ${approvals_required})`));
    },
    "action.resolved": (e, r, depth) => {
      const { decision, tool_name, reason } = e.payload;
      if (decision === "approved") return r.line(depth, r.tone("green", `✓ ${tool_name} approved`));
      if (decision === "answered") return r.line(depth, r.tone("green", `✓ answered: ${oneLine(JSON.stringify(e.payload.response), 80)}`));
      if (decision === "rejected") return r.line(depth, r.tone("yellow", `✗ ${tool_name} rejected${reason ? ` (${oneLine(reason, 80)})` : ""}`));
      return r.line(depth, r.tone("yellow", `✗ ${tool_name}: no decision in time`));
    },
    "subagent.failed": (e, r, depth) => r.line(depth, r.tone("red", `✗ sub-agent failed: ${oneLine(e.payload.error, 100)}`)),
    "run.status": (e, r, depth) => {
      if (e.payload.phase === "handoff") return r.line(depth, r.tone("dim", `⇢ handed off to ${e.payload.to}`));
      if (e.payload.phase === "recovering") return r.line(depth, r.tone("dim", `… resuming after a restart`));
      return "";
    },
    "budget.exceeded": (e, r, depth) => r.line(depth, r.tone("red", `! budget exceeded: ${e.payload.reason} (${e.payload.observed} > ${e.payload.limit})`)),
    "turn.paused": (e, r, depth) => r.line(depth, r.tone("yellow", `‖ paused by quota ${e.payload.quota_id}: ${oneLine(e.payload.message, 100)}`)),
    "turn.resumed": (e, r, depth) =>
      r.line(
        depth,
        r.tone(
          "dim",
          `▶ resumed (quota ${e.payload.quota_id} ${e.payload.continued_by ? `gone over once, continued by ${e.payload.continued_by}` : "has room"})`,
        ),
      ),
    "turn.continued": (e, r, depth) => r.line(depth, r.tone("yellow", `▶ continued over quota ${e.payload.quota_id} by ${e.payload.by}`)),
    "quota.warning": (e, r, depth) =>
      r.line(depth, r.tone("yellow", `! quota ${e.payload.quota_id}: ${e.payload.used} of ${e.payload.limit} ${e.payload.dimension} used`)),
    "runtime.warning": (e, r, depth) => r.line(depth, r.tone("yellow", `! ${oneLine(e.payload.message, 120)}`)),
    "runtime.error": (e, r, depth) => r.line(depth, r.tone("red", `! ${oneLine(e.payload.message, 120)}`)),
    "model.fallback": (e, r, depth) =>
      r.line(depth, r.tone("yellow", `! model ${e.payload.from} failed over to ${e.payload.to}: ${oneLine(e.payload.reason, 80)}`)),
    "guardrail.checked": (e, r, depth) => {
      const { verdict, rule, stage } = e.payload;
      if (verdict === "pass") return "";
      return r.line(depth, r.tone(verdict === "block" ? "red" : "yellow", `! guardrail ${rule} (${stage}): ${verdict}`));
    },
    "turn.completed": (e, r) => {
      const { output, stop_reason } = e.payload;
      let out = "";
      if (!r.streamedText && output !== undefined && output !== null && output !== "") {
        out += r.line(0, typeof output === "string" ? output : JSON.stringify(output, null, 2));
      }
      out += r.lineStart();
      if (stop_reason && stop_reason !== "final_answer") out += `${r.tone("yellow", `[stopped: ${stop_reason}]`)}\n`;
      return out;
    },
    "turn.failed": (e, r) => r.line(0, r.tone("red", `✗ turn failed: ${e.payload.error?.code ?? "error"}: ${oneLine(e.payload.error?.message, 200)}`)),
    "turn.cancelled": (e, r) => r.line(0, r.tone("yellow", `⏹ turn cancelled${e.payload.reason ? ` (${oneLine(e.payload.reason, 80)})` : ""}`)),
    "turn.rolled_back": (e, r) => r.line(0, r.tone("yellow", `↶ turn rolled back: it left the conversation${sideEffects(e.payload.side_effects)}`)),
    "tool.result.late": (e, r) =>
      r.line(0, r.tone("dim", `↳ late result of ${e.payload.name} (after its turn ended): ${resultTail(e.payload.output, e.payload.is_error, r.opts)}`)),
  };

  /** What to write before printing a line of one's own (a prompt, an error): ends a line in progress. */
  lineStart(): string {
    const out = this.midLine ? "\n" : "";
    this.midLine = false;
    this.openCard = null;
    return out;
  }

  private closeCard(): string {
    if (this.openCard === null) return "";
    return this.lineStart();
  }

  private line(depth: number, text: string): string {
    return `${this.lineStart()}${indent(depth)}${text}\n`;
  }

  private tone(tone: Tone, text: string): string {
    return this.opts.color ? `${ANSI[tone]}${text}${ANSI.reset}` : text;
  }
}

/** An execution tree (`GET .../tree`) as indented cards, one per call, with durations. */
export function formatTree(tree: { nodes: TreeNode[] }, opts: FormatOptions = {}): string {
  const lines: string[] = [];
  const walk = (nodes: TreeNode[], depth: number) => {
    for (const n of nodes) {
      const label = n.title ? `${n.name} "${oneLine(n.title, 40)}"` : n.name;
      const args = n.args_preview === null ? "" : oneLine(n.args_preview, opts.argsWidth ?? 60);
      const result = n.duration_ms === null ? "… running" : `→ ${n.is_error ? "✗ " : ""}${oneLine(n.result_preview ?? "", opts.resultWidth ?? 80)}`;
      const took = n.duration_ms === null ? "" : ` (${n.duration_ms} ms)`;
      lines.push(`${indent(depth)}⚙ ${label}(${args === "{}" ? "" : args}) ${result}${took}`);
      walk(n.children ?? [], depth + 1);
    }
  };
  walk(tree.nodes, 0);
  return lines.length > 0 ? `${lines.join("\n")}\n` : "(no tool calls)\n";
}

/** The tool calls a rolled-back turn had started: their effects were not undone. */
function sideEffects(calls: { name: string }[]): string {
  return calls.length === 0 ? "" : `; not undone: ${calls.map((c) => c.name).join(", ")}`;
}
