// The tools of a replayed turn (docs/guides/fork-and-replay.md): a call with the same name and arguments as a recorded one gets the
// recorded result ("recorded") or runs again ("live"); a call the recording never made runs live only when it
// cannot change anything (permission class safe or knowledge), and otherwise gets an error result saying so. A
// call the recorded turn's end cut short never returned: it has no recorded result, only the cut's error.
import type { EventDraft } from "../protocol/events";
import { canonicalJson } from "./request-fingerprint";
import { RUN_CODE, type ScriptSeen, seenOf } from "./tools/code-mode";
import { type ToolDefinition, ToolError } from "./tools/types";
import { cutToolOutput } from "./turn-state";

export type ToolReplayMode = "recorded" | "live";

export interface RecordedResult {
  name: string;
  /** The arguments the tool ran with (without injected ones). */
  args: unknown;
  output: unknown;
  is_error: boolean;
  /** The turn's end cut the call short: output is the cut's error, not the tool's. */
  cut?: true;
  /** A run_code call's: what its script saw of the clock, random and crypto sources. */
  script?: ScriptSeen;
}

const CUT_OUTPUTS = new Set([cutToolOutput("cancelled"), cutToolOutput("interrupted")]);

/** The tool calls of a recorded turn that have a result, in the order they started. */
export function recordedResults(events: readonly EventDraft[]): RecordedResult[] {
  const started = new Map<string, { name: string; args: unknown }>();
  const results: RecordedResult[] = [];
  for (const e of events) {
    if (e.subagent_id || !e.tool_call_id) continue;
    if (e.type === "tool.started") started.set(e.tool_call_id, { name: e.payload.name, args: e.payload.args });
    const call = started.get(e.tool_call_id);
    if (e.type !== "tool.result" || !call) continue;
    const { output, is_error, metadata } = e.payload;
    const cut = is_error && CUT_OUTPUTS.has(output as string) ? { cut: true as const } : {};
    results.push({ ...call, output, is_error, ...cut, ...(metadata.script ? { script: seenOf(metadata.script) } : {}) });
  }
  return results;
}

const keyOf = (name: string, args: unknown) => `${name}\u0000${canonicalJson(args)}`;

/** A replayed turn's tools, and whether a call would be answered from the recording (so nothing runs). */
export interface ReplayTools {
  tools: Map<string, ToolDefinition>;
  /** Whether the next call of `name` with `args` gets its recorded result rather than running. */
  answersFromRecording(name: string, args: unknown): boolean;
  /** What the recorded run_code call with these arguments saw of the clock and Math.random (each answers one call). */
  recordedScript(args: unknown): ScriptSeen | null;
}

/** `tools` with each executor answering from `recorded` as `mode` says; each recorded result answers one call. */
export function replayTools(tools: Map<string, ToolDefinition>, recorded: RecordedResult[], mode: ToolReplayMode): ReplayTools {
  const unused = new Map<string, RecordedResult[]>();
  for (const r of recorded) {
    const key = keyOf(r.name, r.args);
    unused.set(key, [...(unused.get(key) ?? []), r]);
  }
  const recordedAnswer = (match: RecordedResult | undefined) => match !== undefined && mode === "recorded" && !match.cut;
  const wrapped = new Map<string, ToolDefinition>();
  for (const [name, tool] of tools) {
    if (tool.loop_handled) {
      wrapped.set(name, tool); // the loop runs these itself; execute is never called
      continue;
    }
    const execute: ToolDefinition["execute"] = async (args, ctx) => {
      const match = unused.get(keyOf(name, args))?.shift();
      if (match && recordedAnswer(match)) {
        if (match.is_error) throw new ToolError(typeof match.output === "string" ? match.output : JSON.stringify(match.output));
        return match.output;
      }
      // Marked as a replay's: a webhook's Idempotency-Key must not deduplicate it against the recorded call.
      if ((match && mode === "live") || tool.permission_class === "safe" || tool.permission_class === "knowledge")
        return tool.execute(args, { ...ctx, replay: true });
      const why = match ? "was cut short in the recorded turn, so it has no recorded result" : "was not called with these arguments in the recorded turn";
      throw new ToolError(`${name} ${why}; a replay runs only safe and knowledge tools it did not record`);
    };
    wrapped.set(name, { ...tool, execute });
  }
  const scripts = recorded.filter((r) => r.script);
  const recordedScript = (args: unknown) => {
    const at = scripts.findIndex((r) => keyOf(r.name, r.args) === keyOf(RUN_CODE, args));
    return at < 0 ? null : scripts.splice(at, 1)[0]!.script!;
  };
  return { tools: wrapped, answersFromRecording: (name, args) => recordedAnswer(unused.get(keyOf(name, args))?.[0]), recordedScript };
}
