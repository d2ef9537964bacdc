// The built-in tools: `clock` and `calculator` here, and ask_user, the workspace, memory and http_fetch tools.
import { askUser } from "./ask-user";
import { CalculatorError, evaluateExpression } from "./calculator-parser";
import { httpFetch } from "./http-fetch";
import { memoryTools } from "./memory-tools";
import { agentOrchestrate } from "./orchestrate-tool";
import { resourceMemoryTools } from "./resource-memory-tools";
import { runSubtask } from "./subagent-tools";
import { type ToolDefinition, ToolError } from "./types";
import { workspaceTools } from "./workspace-tools";

const clock: ToolDefinition = {
  name: "clock",
  description: "Returns the current date and time (ISO 8601 in UTC, and in the given IANA time zone if one is named).",
  parameters: {
    type: "object",
    properties: { timezone: { type: "string", description: 'IANA time zone such as "Europe/Paris"; default UTC' } },
    additionalProperties: false,
  },
  permission_class: "safe",
  parallel_safe: true,
  idempotent: true,
  async execute(args, ctx) {
    const now = ctx.now();
    const iso = new Date(now).toISOString();
    const timezone = typeof args.timezone === "string" && args.timezone ? args.timezone : "UTC";
    let local: string;
    try {
      local = new Intl.DateTimeFormat("en-US", { timeZone: timezone, dateStyle: "full", timeStyle: "long" }).format(now);
    } catch {
      throw new ToolError(`Unknown time zone "${timezone}"`);
    }
    return { iso, epoch_ms: now, timezone, local };
  },
};

const calculator: ToolDefinition = {
  name: "calculator",
  description:
    "Evaluates an arithmetic expression: + - * / % ^, parentheses, constants pi e tau, and functions " +
    "sqrt abs sin cos tan asin acos atan ln log log2 exp floor ceil round min max pow hypot.",
  parameters: {
    type: "object",
    properties: { expression: { type: "string", description: "for example (2 + 3) * sqrt(16)" } },
    required: ["expression"],
    additionalProperties: false,
  },
  permission_class: "safe",
  parallel_safe: true,
  idempotent: true,
  async execute(args) {
    if (typeof args.expression !== "string") throw new ToolError('"expression" must be a string');
    try {
      return String(evaluateExpression(args.expression));
    } catch (err) {
      if (err instanceof CalculatorError) throw new ToolError(err.message);
      throw err;
    }
  },
};

export const BUILTIN_TOOLS: ReadonlyMap<string, ToolDefinition> = new Map(
  [clock, calculator, askUser, httpFetch, runSubtask, agentOrchestrate, ...workspaceTools, ...memoryTools, ...resourceMemoryTools].map((t) => [t.name, t]),
);
