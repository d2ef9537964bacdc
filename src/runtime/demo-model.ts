// The built-in offline `demo` model: deterministic, no network. It calls `calculator` when the user asks
// for arithmetic, `clock` when asked about the time, and `ask_user` for an input starting "ask me" (if the
// agent has those tools), then answers from the tool result, so a local `npm start` shows a real tool round trip.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";

type Reply = { kind: "text"; text: string } | { kind: "tool"; name: string; input: Record<string, unknown> };

const EXPRESSION = /[-+(]*\s*(?:\d+(?:\.\d+)?|\.\d+|pi\b|sqrt\s*\()[\d\s.+\-*/%^()a-z,]*[\d)]/i;
const WORDS_PER_CHUNK = 1;
const ASK_ME = /^ask me\b[:,]?\s*(.+)$/is;
/**
 * `demo:slow` streams a word every 250 ms and ends each answer with this, about ten seconds in all: time enough
 * to press Ctrl-C in a watcher (or Stop in a page) by hand while the answer is still streaming.
 */
const SLOW_DELAY_MS = 250;
const SLOW_CODA =
  " This is the slow demo model, which sends one word every quarter of a second, so there is time to stop the" +
  " watcher with Ctrl-C while the answer is still streaming and then resume it from the sequence it printed.";

function lastUserText(prompt: LanguageModelV3Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i]!;
    if (m.role === "user")
      return m.content
        .map((p) => (p.type === "text" ? p.text : ""))
        .join(" ")
        .trim();
  }
  return "";
}

function toolResultText(prompt: LanguageModelV3Prompt): { name: string; text: string; isError: boolean } | null {
  const last = prompt[prompt.length - 1];
  if (last?.role !== "tool") return null;
  const part = last.content.find((p) => p.type === "tool-result");
  if (part?.type !== "tool-result") return null;
  const out = part.output;
  const isError = out.type === "error-text" || out.type === "error-json";
  const text = out.type === "text" || out.type === "error-text" ? out.value : JSON.stringify("value" in out ? out.value : out);
  return { name: part.toolName, text, isError };
}

export function demoReply(prompt: LanguageModelV3Prompt, toolNames: string[]): Reply {
  const result = toolResultText(prompt);
  if (result) {
    if (result.isError) return { kind: "text", text: `The ${result.name} tool failed: ${result.text}` };
    if (result.name === "calculator") return { kind: "text", text: `The answer is ${result.text}.` };
    if (result.name === "clock") return { kind: "text", text: `The clock says ${result.text}.` };
    if (result.name === "ask_user") return { kind: "text", text: `You answered: ${result.text}` };
    return { kind: "text", text: `The ${result.name} tool returned: ${result.text}` };
  }
  const text = lastUserText(prompt);
  const asked = text.match(ASK_ME)?.[1]?.trim();
  if (toolNames.includes("ask_user") && asked) return { kind: "tool", name: "ask_user", input: askUserInput(asked) };
  if (toolNames.includes("clock") && /\b(time|date|clock|today)\b/i.test(text)) {
    return { kind: "tool", name: "clock", input: {} };
  }
  const expr = text.match(EXPRESSION)?.[0];
  if (toolNames.includes("calculator") && expr && /[+\-*/%^(]/.test(expr)) {
    return { kind: "tool", name: "calculator", input: { expression: expr.trim() } };
  }
  return {
    kind: "text",
    text: `You said: "${text}". I am the offline demo model: ask me to calculate something like 2 * (3 + 4), or what time it is.`,
  };
}

/**
 * "ask me <question>" makes the demo ask it with ask_user; choices in brackets, split by |, make it a pick
 * ("ask me: which size? [S|M|L]").
 */
function askUserInput(asked: string): Record<string, unknown> {
  const choices = asked.match(/\[([^\]]+)\]\s*$/);
  const question = (choices ? asked.slice(0, choices.index) : asked).trim();
  const options =
    choices?.[1]
      ?.split("|")
      .map((c) => c.trim())
      .filter(Boolean) ?? [];
  return { question: question.charAt(0).toUpperCase() + question.slice(1), ...(options.length > 0 ? { choices: options } : {}) };
}

function usageOf(prompt: LanguageModelV3Prompt, output: string): LanguageModelV3Usage {
  const input = Math.ceil(JSON.stringify(prompt).length / 4);
  const out = Math.ceil(output.length / 4);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: out, text: out, reasoning: 0 },
  };
}

export class DemoModel implements LanguageModelV3 {
  readonly specificationVersion = "v3";
  readonly provider = "demo";
  readonly supportedUrls = {};

  /** Pause between streamed words, so streaming is visible in a terminal. */
  private readonly delayMs: number;

  constructor(readonly modelId: string) {
    this.delayMs = modelId === "slow" ? SLOW_DELAY_MS : 15;
  }

  private reply(options: LanguageModelV3CallOptions): Reply {
    const names = (options.tools ?? []).map((t) => t.name);
    const reply = demoReply(options.prompt, names);
    return reply.kind === "text" && this.modelId === "slow" ? { kind: "text", text: reply.text + SLOW_CODA } : reply;
  }

  async doGenerate(options: LanguageModelV3CallOptions) {
    const reply = this.reply(options);
    const content: LanguageModelV3Content[] =
      reply.kind === "text"
        ? [{ type: "text", text: reply.text }]
        : [{ type: "tool-call", toolCallId: `demo_${crypto.randomUUID()}`, toolName: reply.name, input: JSON.stringify(reply.input) }];
    return {
      content,
      finishReason: { unified: reply.kind === "text" ? "stop" : "tool-calls", raw: undefined },
      usage: usageOf(options.prompt, reply.kind === "text" ? reply.text : JSON.stringify(reply.input)),
      warnings: [],
    } as Awaited<ReturnType<LanguageModelV3["doGenerate"]>>;
  }

  async doStream(options: LanguageModelV3CallOptions) {
    const reply = this.reply(options);
    const { delayMs } = this;
    const signal = options.abortSignal;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      async start(controller) {
        controller.enqueue({ type: "stream-start", warnings: [] });
        if (reply.kind === "text") {
          controller.enqueue({ type: "text-start", id: "t0" });
          const words = reply.text.split(/(?<= )/);
          for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) {
            if (signal?.aborted) return controller.error(signal.reason);
            if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
            controller.enqueue({ type: "text-delta", id: "t0", delta: words.slice(i, i + WORDS_PER_CHUNK).join("") });
          }
          controller.enqueue({ type: "text-end", id: "t0" });
        } else {
          controller.enqueue({
            type: "tool-call",
            toolCallId: `demo_${crypto.randomUUID()}`,
            toolName: reply.name,
            input: JSON.stringify(reply.input),
          });
        }
        controller.enqueue({
          type: "finish",
          finishReason: { unified: reply.kind === "text" ? "stop" : "tool-calls", raw: undefined },
          usage: usageOf(options.prompt, reply.kind === "text" ? reply.text : JSON.stringify(reply.input)),
        });
        controller.close();
      },
    });
    return { stream };
  }
}
