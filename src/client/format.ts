// Pure text formatting of events for the command line (no I/O): streamed model text, one-line tool cards
// indented by sub-agent depth, approval prompts, turn outcomes and execution trees.
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
    const depth = e.depth ?? 0;
    switch (e.type) {
      case "turn.started":
        this.streamedText = false;
        return "";
      case "model.delta": {
        if (depth > 0 || typeof e.payload.text !== "string" || e.payload.text === "") return "";
        const text = this.closeCard() + e.payload.text;
        this.streamedText = true;
        this.midLine = !text.endsWith("\n");
        return text;
      }
      case "tool.started": {
        const id = e.tool_call_id ?? e.event_id;
        this.started.set(id, { name: e.payload.name, args: e.payload.args, depth });
        const out = `${this.lineStart()}${indent(depth)}${this.tone("cyan", `⚙ ${callLabel(String(e.payload.name), e.payload.args, this.opts.argsWidth ?? 60)}`)}`;
        this.openCard = id;
        this.midLine = true;
        return out;
      }
      case "tool.result": {
        const id = e.tool_call_id ?? "";
        const tail = this.tone(e.payload.is_error ? "red" : "dim", resultTail(e.payload.output, !!e.payload.is_error, this.opts));
        if (this.openCard === id && this.midLine) {
          this.openCard = null;
          this.midLine = false;
          return ` ${tail}\n`;
        }
        // Something came in between (or the call never started: a refused approval): a full card of its own.
        // A call whose card was printed already shows its arguments as "…".
        const s = this.started.get(id);
        const label = s ? `${s.name}(${s.args && Object.keys(s.args as object).length > 0 ? "…" : ""})` : `${e.payload.name}()`;
        return this.line(depth, `${this.tone("cyan", `⚙ ${label}`)} ${tail}`);
      }
      case "action.required":
        // The question itself is asked by the caller (approvalPrompt); here only the line is ended. A refused
        // call never starts, so its result card finds its name here.
        if (e.tool_call_id) this.started.set(e.tool_call_id, { name: String(e.payload.tool_name), args: e.payload.args, depth });
        return this.lineStart();
      case "action.resolved": {
        const d = e.payload.decision as string;
        if (d === "approved") return this.line(depth, this.tone("green", `✓ ${e.payload.tool_name} approved`));
        if (d === "rejected")
          return this.line(depth, this.tone("yellow", `✗ ${e.payload.tool_name} rejected${e.payload.reason ? ` (${oneLine(e.payload.reason, 80)})` : ""}`));
        return this.line(depth, this.tone("yellow", `✗ ${e.payload.tool_name}: no decision in time`));
      }
      case "subagent.failed":
        return this.line(depth, this.tone("red", `✗ sub-agent failed: ${oneLine(e.payload.error, 100)}`));
      case "run.status":
        if (e.payload.phase === "handoff") return this.line(depth, this.tone("dim", `⇢ handed off to ${e.payload.to}`));
        if (e.payload.phase === "recovering") return this.line(depth, this.tone("dim", `… resuming after a restart`));
        return "";
      case "budget.exceeded":
        return this.line(depth, this.tone("red", `! budget exceeded: ${e.payload.reason} (${e.payload.observed} > ${e.payload.limit})`));
      case "runtime.warning":
        return this.line(depth, this.tone("yellow", `! ${oneLine(e.payload.message, 120)}`));
      case "runtime.error":
        return this.line(depth, this.tone("red", `! ${oneLine(e.payload.message, 120)}`));
      case "turn.completed": {
        let out = "";
        if (!this.streamedText && e.payload.output !== undefined && e.payload.output !== null && e.payload.output !== "") {
          out += this.line(0, typeof e.payload.output === "string" ? e.payload.output : JSON.stringify(e.payload.output, null, 2));
        }
        out += this.lineStart();
        if (e.payload.stop_reason && e.payload.stop_reason !== "final_answer") out += `${this.tone("yellow", `[stopped: ${e.payload.stop_reason}]`)}\n`;
        return out;
      }
      case "turn.failed":
        return this.line(0, this.tone("red", `✗ turn failed: ${e.payload.error?.code ?? "error"}: ${oneLine(e.payload.error?.message, 200)}`));
      case "turn.cancelled":
        return this.line(0, this.tone("yellow", `⏹ turn cancelled${e.payload.reason ? ` (${oneLine(e.payload.reason, 80)})` : ""}`));
      default:
        return "";
    }
  }

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
