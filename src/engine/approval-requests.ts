// Asking for the decision a tool call needs before it runs: an approval of a call to one of the agent's
// hitl_tools, or the answer to a question (ask_user, or a remote task's question that a tool's result asked).
import { schemaErrors } from "./json-schema";
import type { TurnSetup } from "./ports";
import { replayedDecision } from "./recorded-decisions";
import { forLog, refsOf } from "./tool-spill";
import { responseSchemaErrors, responseSchemaOf } from "./tools/ask-user";
import { splitInjectedArgs } from "./tools/injected-args";
import { hitlRule } from "./tools/mcp-names";
import type { ToolDefinition } from "./tools/types";
import type { Level, Turn } from "./turn-context";
import type { ToolCallRecord } from "./turn-state";

/**
 * A call to one of the agent's hitl_tools, or an ask_user question, that could run (a malformed call is refused
 * without asking anyone).
 */
function needsApproval(call: ToolCallRecord, setup: TurnSetup): boolean {
  const tool = setup.tools.get(call.name);
  if (!tool || call.invalid || call.blocked) return false;
  if (tool.loop_handled !== "ask_user" && !hitlRule(setup.config.hitl_tools, tool)) return false;
  const { executable } = splitInjectedArgs(argsOf(call), setup.config.injected_tool_args);
  return argumentErrors(tool, executable).length === 0;
}

/** What is wrong with a call's arguments: against the tool's parameters, and an ask_user response_schema's patterns. */
export function argumentErrors(tool: ToolDefinition, args: Record<string, unknown>): string[] {
  const errors = schemaErrors(tool.parameters, args);
  return errors.length === 0 && tool.loop_handled === "ask_user" ? responseSchemaErrors(args) : errors;
}

/** Asks for the decision a call (a script's inner call) needs before it may run, unless it was asked already. */
export async function startApproval(call: ToolCallRecord, level: Level, turn: Turn): Promise<void> {
  const setup = level.run.setup;
  if (call.status === "pending" && !call.approval && needsApproval(call, setup)) await requestApproval(call, level, setup, turn);
}

/** Asks for the approval of a call, or its question's answer; `remote`: the question its result asked (asks_user). */
export async function requestApproval(call: ToolCallRecord, level: Level, setup: TurnSetup, turn: Turn, remote?: string): Promise<void> {
  const { state } = level;
  const action_id = turn.ports.newId("act");
  const tool = setup.tools.get(call.name)!;
  const rule = hitlRule(setup.config.hitl_tools, tool);
  const expires_at = turn.ports.now() + (rule?.timeout_ms ?? setup.config.approval_timeout_ms);
  const { executable, injected } = splitInjectedArgs(argsOf(call), setup.config.injected_tool_args);
  const args = await forLog(executable, call, state, setup, turn);
  call.approval = { action_id, status: "pending", expires_at };
  const asked = tool.loop_handled === "ask_user" || remote !== undefined;
  const question =
    remote !== undefined
      ? { question: remote, response_schema: { type: "string" } }
      : { question: String(executable.question), response_schema: responseSchemaOf(executable) };
  // A quorum approves the arguments as the model made them: each approver must see what the others approved.
  const quorum = rule?.approvals && rule.approvals > 1 ? { approvals_required: rule.approvals } : {};
  // The tool's parameters go with an approval whose arguments may be edited: edits are checked against them.
  const editable = !asked && rule?.allow_edits && !quorum.approvals_required ? { args_schema: tool.parameters } : {};
  turn.ports.requestApproval(
    {
      type: "action.required",
      turn_id: state.turn_id,
      step_id: state.step_id ?? undefined,
      tool_call_id: call.tool_call_id,
      action_id,
      parent_id: level.parent_id,
      depth: level.depth,
      ...(level.subagent_id ? { subagent_id: level.subagent_id } : {}),
      payload: {
        kind: asked ? "user_input" : "tool_approval",
        tool_name: call.name,
        args: args.value,
        injected_args: injected,
        expires_at,
        ...(asked ? question : editable),
        ...(rule?.remind_after_ms ? { remind_after_ms: rule.remind_after_ms } : {}),
        ...quorum,
        ...(rule?.on_timeout === "approve" ? { on_timeout: "approve" as const } : {}),
      },
      ...refsOf(args.artifact),
    },
    turn.root,
  );
  // A replay answers what the recorded turn was answered (nobody is asked again); the loop applies it as any decision.
  const recorded = setup.recordedDecision?.(call.name, args.value);
  if (recorded)
    turn.emit(level, [replayedDecision(recorded, { turn_id: state.turn_id, step_id: state.step_id ?? undefined, tool_call_id: call.tool_call_id, action_id })]);
}

export function argsOf(call: ToolCallRecord): Record<string, unknown> {
  return call.args && typeof call.args === "object" ? (call.args as Record<string, unknown>) : {};
}
