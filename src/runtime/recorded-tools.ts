// The tools of a replayed turn (issue 21): a call with the same name and arguments as a recorded one gets the
// recorded result ("recorded") or runs again ("live"); a call the recording never made runs live only when it
// cannot change anything (permission class safe or knowledge), and otherwise gets an error result saying so.
import type { EventDraft } from "../protocol/events";
import { canonicalJson } from "./request-fingerprint";
import { type ToolDefinition, ToolError } from "./tools/types";

export type ToolReplayMode = "recorded" | "live";

export interface RecordedResult {
  name: string;
  /** The arguments the tool ran with (without injected ones). */
  args: unknown;
  output: unknown;
  is_error: boolean;
}

/** The tool calls of a recorded turn that have a result, in the order they started. */
export function recordedResults(events: readonly EventDraft[]): RecordedResult[] {
  const started = new Map<string, { name: string; args: unknown }>();
  const results: RecordedResult[] = [];
  for (const e of events) {
    if (e.subagent_id || !e.tool_call_id) continue;
    if (e.type === "tool.started") started.set(e.tool_call_id, { name: e.payload.name, args: e.payload.args });
    const call = started.get(e.tool_call_id);
    if (e.type === "tool.result" && call) results.push({ ...call, output: e.payload.output, is_error: e.payload.is_error });
  }
  return results;
}

const keyOf = (name: string, args: unknown) => `${name}\u0000${canonicalJson(args)}`;

/** `tools` with each executor answering from `recorded` as `mode` says; each recorded result answers one call. */
export function replayTools(tools: Map<string, ToolDefinition>, recorded: RecordedResult[], mode: ToolReplayMode): Map<string, ToolDefinition> {
  const unused = new Map<string, RecordedResult[]>();
  for (const r of recorded) {
    const key = keyOf(r.name, r.args);
    unused.set(key, [...(unused.get(key) ?? []), r]);
  }
  const wrapped = new Map<string, ToolDefinition>();
  for (const [name, tool] of tools) {
    if (tool.loop_handled) {
      wrapped.set(name, tool); // the loop runs these itself; execute is never called
      continue;
    }
    const execute: ToolDefinition["execute"] = async (args, ctx) => {
      const match = unused.get(keyOf(name, args))?.shift();
      if (match && mode === "recorded") {
        if (match.is_error) throw new ToolError(typeof match.output === "string" ? match.output : JSON.stringify(match.output));
        return match.output;
      }
      if (match || tool.permission_class === "safe" || tool.permission_class === "knowledge") return tool.execute(args, ctx);
      throw new ToolError(`${name} was not called with these arguments in the recorded turn; a replay runs only safe and knowledge tools it did not record`);
    };
    wrapped.set(name, { ...tool, execute });
  }
  return wrapped;
}
