// The model of a replayed turn (docs/guides/fork-and-replay.md): it answers each call from the recorded turn while the call is the
// recorded one (same request_hash: prompt, tool schemas, parameters), and from the first call that differs, or
// goes past the recording, hands every call to the live model. A LanguageModelV3, so the loop runs unchanged.
// The recording holds completed calls only: a call cut short (interrupted, cancelled, failed, or the turn's
// budget stopping it) has no answer to give, so a recorded turn that ended early runs out there, and the reason
// names how the original ended.
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart, LanguageModelV3StreamResult } from "@ai-sdk/provider";
import type { EventDraft } from "../protocol/events";
import { REPLAY_METADATA } from "./model-stream";
import { requestFingerprint } from "./request-fingerprint";
import type { Usage } from "./turn-state";

export interface RecordedCall {
  request_hash: string | undefined;
  text: string;
  tool_calls: { tool_call_id: string; name: string; args: unknown }[];
  usage: Usage;
  finish_reason: string;
  /** The model that answered, when a fallback did (its finish names it, so the replay records it too). */
  model?: string;
}

/** A recorded turn's model calls, and why the turn ended early (null when it completed). */
export interface Recording {
  calls: RecordedCall[];
  cut: string | null;
}

/** Finish reasons of a call that did not complete (closingEvents and callModel write them). */
const CUT_CALL = new Set(["interrupted", "cancelled", "error"]);
export const isCutCall = (finishReason: string) => CUT_CALL.has(finishReason);

export interface Divergence {
  /** The 1-based model call where the run left the recording. */
  step: number;
  reason: string;
}

/** A recorded turn, from its events (its own level only, not sub-agents'), with its terminal event when it ended. */
export function recordingOf(events: readonly EventDraft[]): Recording {
  return { calls: recordedCalls(events), cut: cutReason(events) };
}

/** How the turn ended when it did not complete: the replay names it where the recording runs out. */
function cutReason(events: readonly EventDraft[]): string | null {
  for (const e of events) {
    if (e.type === "turn.cancelled") return `the recorded turn was cancelled (${e.payload.reason})`;
    if (e.type === "turn.failed") return `the recorded turn failed (${e.payload.error.code}: ${e.payload.error.message})`;
  }
  return null;
}

/** The completed model calls of one recorded turn, in order, from its events (its own level only, not sub-agents'). */
export function recordedCalls(events: readonly EventDraft[]): RecordedCall[] {
  const calls: RecordedCall[] = [];
  const seen = new Set<string>();
  for (const e of events) {
    if (e.subagent_id) continue;
    const current = calls.at(-1);
    if (e.type === "model.requested") {
      calls.push({
        request_hash: e.payload.request_hash,
        text: "",
        tool_calls: [],
        usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
        finish_reason: "",
      });
    } else if (e.type === "model.delta" && current) {
      current.text += e.payload.text;
    } else if (e.type === "model.completed" && current) {
      current.usage = e.payload.usage;
      current.finish_reason = e.payload.finish_reason;
      if (e.payload.model) current.model = e.payload.model;
    } else if ((e.type === "tool.started" || e.type === "action.required") && current && e.tool_call_id && !e.parent_id && !seen.has(e.tool_call_id)) {
      // (A call with a parent at this level is a code-mode script's inner call: the script made it, not the model.)
      // A call that waited for approval shows up first in action.required, then (approved) in tool.started.
      seen.add(e.tool_call_id);
      // The model sent the tool's arguments and the injected ones together.
      const name = e.type === "tool.started" ? e.payload.name : e.payload.tool_name;
      const args = { ...(e.payload.args as Record<string, unknown>), ...e.payload.injected_args };
      current.tool_calls.push({ tool_call_id: e.tool_call_id, name, args });
    }
  }
  // A cut call is no answer: one a restart cut was made again, and one the turn's end cut is where it stops.
  return calls.filter((c) => c.finish_reason !== "" && !isCutCall(c.finish_reason));
}

export class RecordedModel implements LanguageModelV3 {
  readonly specificationVersion = "v3";
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls: LanguageModelV3["supportedUrls"];
  /** Calls made so far (served from the recording or live). */
  private made = 0;
  /** Set at the first call not answered from the recording; every later call is live too. */
  divergence: Divergence | null = null;
  /** Calls that went to the live model. */
  liveCalls = 0;

  constructor(
    private readonly live: LanguageModelV3,
    /** The model spec the recording's request_hash was computed with. */
    private readonly spec: string,
    private readonly recording: Recording,
    private readonly onDiverge: (d: Divergence) => void,
    /** Where a resumed turn stands: the recorded calls it has used, and whether it left the recording already. */
    from: { made: number; divergence: Divergence | null } = { made: 0, divergence: null },
  ) {
    this.made = from.made;
    this.divergence = from.divergence;
    this.provider = live.provider;
    this.modelId = live.modelId;
    this.supportedUrls = live.supportedUrls;
  }

  async doGenerate(options: LanguageModelV3CallOptions) {
    // The runtime only streams; a generate call is never served from the recording.
    this.diverge("a generate call is not recorded");
    this.liveCalls += 1;
    return this.live.doGenerate(options);
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const recorded = this.recording.calls[this.made];
    this.made += 1;
    if (!this.divergence) {
      const reason = this.mismatch(recorded, options);
      if (!reason && recorded) return { stream: replayed(recorded) };
      this.diverge(reason ?? "the recording has no more model calls");
    }
    this.liveCalls += 1;
    return this.live.doStream(options);
  }

  private mismatch(recorded: RecordedCall | undefined, options: LanguageModelV3CallOptions): string | null {
    if (!recorded) return this.recording.cut ? `the recording ends here: ${this.recording.cut}` : "the recorded turn made no more model calls";
    if (!recorded.request_hash) return "the recording has no request fingerprint";
    const hash = requestFingerprint(this.spec, options);
    return hash === recorded.request_hash ? null : "the request differs from the recorded one (messages, tool schemas or parameters)";
  }

  private diverge(reason: string): void {
    if (this.divergence) return;
    this.divergence = { step: this.made, reason };
    this.onDiverge(this.divergence);
  }
}

/** A recorded call as the provider stream it came from. */
function replayed(call: RecordedCall): ReadableStream<LanguageModelV3StreamPart> {
  const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
  if (call.text) {
    parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: call.text }, { type: "text-end", id: "t" });
  }
  for (const c of call.tool_calls) {
    parts.push({ type: "tool-call", toolCallId: c.tool_call_id, toolName: c.name, input: JSON.stringify(c.args ?? {}) });
  }
  parts.push({
    type: "finish",
    finishReason: { unified: call.finish_reason as "stop", raw: call.finish_reason },
    usage: {
      inputTokens: { total: call.usage.input_tokens, noCache: undefined, cacheRead: call.usage.cached_input_tokens, cacheWrite: undefined },
      outputTokens: { total: call.usage.output_tokens, text: undefined, reasoning: undefined },
    },
    ...(call.model ? { providerMetadata: { [REPLAY_METADATA]: { model: call.model } } } : {}),
  });
  return new ReadableStream({
    start(controller) {
      for (const p of parts) controller.enqueue(p);
      controller.close();
    },
  });
}
