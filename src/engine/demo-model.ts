// The built-in offline `demo` model: deterministic, no network. Each documented feature has a trigger, an
// input that makes it call a tool (when the agent has that tool), answer from what it was shown, or fail; the
// table of triggers is in README.md's tour ("The demo model's triggers"), and the guides' examples use them.
// `demo:slow` streams slowly, `demo:fail` always fails (to show fallback_models), any other `demo:<id>` is `demo`.
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";

type Reply = { kind: "text"; text: string; cut?: true } | { kind: "tool"; name: string; input: Record<string, unknown> };

const EXPRESSION = /[-+(]*\s*(?:\d+(?:\.\d+)?|\.\d+|pi\b|sqrt\s*\()[\d\s.+\-*/%^()a-z,]*[\d)]/i;
const WORDS_PER_CHUNK = 1;
const ASK_ME = /^ask me\b[:,]?\s*(.+)$/is;
const ASK_NUMBER = /^ask me for a number\b/i;
const REMEMBER = /^remember (?:that )?(?:my (.+?) is (.+?)|(.+?))\.?$/is;
const RECALL = /^recall\b[:,]?\s*(.+)$/is;
/** `use <tool> with <json object>`: calls any tool of the agent (a webhook, MCP or TypeScript tool) with those arguments. */
const USE_TOOL = /^use ([A-Za-z0-9_:/*-]{1,160}) with (\{.*\})\s*$/s;
const WHAT_YOU_KNOW = /\bwhat do you (?:know|remember) about me\b/i;
/** The heading under which the system prompt shows the resource's working memory (src/engine/memory/working-memory.ts). */
const WORKING_MEMORY = "Working memory (what is known about this user";
/**
 * `demo:slow` streams a word every 250 ms and ends each answer with this, about ten seconds in all: time enough
 * to press Ctrl-C in a watcher (or Stop in a page) by hand while the answer is still streaming.
 */
const SLOW_DELAY_MS = 250;
const SLOW_CODA =
  " This is the slow demo model, which sends one word every quarter of a second, so there is time to stop the" +
  " watcher with Ctrl-C while the answer is still streaming and then resume it from the sequence it printed.";

type UserPart = Extract<LanguageModelV3Prompt[number], { role: "user" }>["content"][number];

function lastUserParts(prompt: LanguageModelV3Prompt): UserPart[] {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i]!;
    if (m.role === "user") return m.content;
  }
  return [];
}

/** What the demo says about the files of the user's message: each one's media type and size (or address). */
function describeFiles(parts: UserPart[]): string | null {
  const files = parts.flatMap((p) => (p.type === "file" ? [p] : []));
  if (files.length === 0) return null;
  const one = (f: (typeof files)[number]) => {
    const size =
      f.data instanceof URL
        ? `at ${f.data.href}`
        : `of ${typeof f.data === "string" ? Math.floor((f.data.replace(/=+$/, "").length * 3) / 4) : f.data.byteLength} bytes`;
    return `${f.mediaType.startsWith("image/") ? "an image" : "a file"} (${f.mediaType}) ${size}`;
  };
  return `I got ${files.map(one).join(" and ")}.`;
}

/** The working memory the system prompt showed, as "key: value" pairs (its text when it is cut), or null. */
function shownWorkingMemory(prompt: LanguageModelV3Prompt): string | null {
  const system = prompt.find((m) => m.role === "system");
  const at = system?.role === "system" ? system.content.indexOf(WORKING_MEMORY) : -1;
  if (system?.role !== "system" || at < 0) return null;
  const text = system.content
    .slice(system.content.indexOf("\n", at) + 1)
    .split("\n\n")[0]!
    .trim();
  try {
    const doc = JSON.parse(text) as Record<string, unknown>;
    return Object.entries(doc)
      .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(", ");
  } catch {
    return text;
  }
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

function useTool(text: string): { name: string; input: Record<string, unknown> } | null {
  const [, name, json] = text.match(USE_TOOL) ?? [];
  if (!name || !json) return null;
  try {
    const input: unknown = JSON.parse(json);
    return input && typeof input === "object" && !Array.isArray(input) ? { name, input: input as Record<string, unknown> } : null;
  } catch {
    return null;
  }
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
  const parts = lastUserParts(prompt);
  const text = parts
    .map((p) => (p.type === "text" ? p.text : ""))
    .join(" ")
    .trim();
  const files = describeFiles(parts);
  if (files) return { kind: "text", text: files };
  const has = (tool: string) => toolNames.includes(tool);
  const use = useTool(text);
  if (use && has(use.name)) return { kind: "tool", ...use };
  if (has("ask_user") && ASK_NUMBER.test(text)) {
    const response_schema = { type: "object", properties: { number: { type: "number" } }, required: ["number"], additionalProperties: false };
    return { kind: "tool", name: "ask_user", input: { question: "Which number?", response_schema } };
  }
  const asked = text.match(ASK_ME)?.[1]?.trim();
  if (has("ask_user") && asked) return { kind: "tool", name: "ask_user", input: askUserInput(asked) };
  const remember = text.match(REMEMBER);
  if (remember) {
    const [, what, value, note] = remember;
    const key = what ? what.trim().toLowerCase().replace(/\W+/g, "_") : "note";
    const val = (value ?? note ?? "").trim();
    if (has("update_working_memory")) return { kind: "tool", name: "update_working_memory", input: { patch: { [key]: val } } };
    if (has("memory_write")) return { kind: "tool", name: "memory_write", input: { key, value: val } };
  }
  const query = text.match(RECALL)?.[1]?.trim();
  if (has("recall") && query) return { kind: "tool", name: "recall", input: { query } };
  if (WHAT_YOU_KNOW.test(text)) {
    const memory = shownWorkingMemory(prompt);
    return { kind: "text", text: memory ? `I know this about you: ${memory}` : "I know nothing about you yet." };
  }
  if (has("clock") && /\b(time|date|clock|today)\b/i.test(text)) {
    return { kind: "tool", name: "clock", input: {} };
  }
  const expr = text.match(EXPRESSION)?.[0];
  if (has("calculator") && expr && /[+\-*/%^(]/.test(expr)) {
    return { kind: "tool", name: "calculator", input: { expression: expr.trim() } };
  }
  return {
    kind: "text",
    text: `You said: "${text}". I am the offline demo model: ask me to calculate something like 2 * (3 + 4), or what time it is (README.md lists what else I do).`,
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

const finishReason = (reply: Reply) => (reply.kind === "tool" ? "tool-calls" : reply.cut ? "length" : "stop");

export class DemoModel implements LanguageModelV3 {
  readonly specificationVersion = "v3";
  readonly provider = "demo";
  readonly supportedUrls = {};

  /** Pause between streamed words, so streaming is visible in a terminal. */
  private readonly delayMs: number;

  constructor(readonly modelId: string) {
    this.delayMs = modelId === "slow" ? SLOW_DELAY_MS : 15;
  }

  /** `demo:fail` stands for a provider that is down: every call fails before a token, so the next model of the chain answers. */
  private failIfFailing(): void {
    if (this.modelId === "fail") throw new Error("demo:fail always fails (it stands for a provider that is down)");
  }

  private reply(options: LanguageModelV3CallOptions): Reply {
    const names = (options.tools ?? []).map((t) => t.name);
    const reply = demoReply(options.prompt, names);
    if (reply.kind !== "text") return reply;
    const text = this.modelId === "slow" ? reply.text + SLOW_CODA : reply.text;
    // A cap on output tokens (max_tokens) cuts the answer where its usage (a token per four characters) reaches it.
    const cap = options.maxOutputTokens;
    return cap !== undefined && text.length > cap * 4 ? { kind: "text", text: text.slice(0, cap * 4), cut: true } : { kind: "text", text };
  }

  async doGenerate(options: LanguageModelV3CallOptions) {
    this.failIfFailing();
    const reply = this.reply(options);
    const content: LanguageModelV3Content[] =
      reply.kind === "text"
        ? [{ type: "text", text: reply.text }]
        : [{ type: "tool-call", toolCallId: `demo_${crypto.randomUUID()}`, toolName: reply.name, input: JSON.stringify(reply.input) }];
    return {
      content,
      finishReason: { unified: finishReason(reply), raw: undefined },
      usage: usageOf(options.prompt, reply.kind === "text" ? reply.text : JSON.stringify(reply.input)),
      warnings: [],
    } as Awaited<ReturnType<LanguageModelV3["doGenerate"]>>;
  }

  async doStream(options: LanguageModelV3CallOptions) {
    this.failIfFailing();
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
          finishReason: { unified: finishReason(reply), raw: undefined },
          usage: usageOf(options.prompt, reply.kind === "text" ? reply.text : JSON.stringify(reply.input)),
        });
        controller.close();
      },
    });
    return { stream };
  }
}
