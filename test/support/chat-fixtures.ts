// Shared pieces of the chat tests: scripted agents and sessions, and the checks every chat test makes.
import { expect } from "vitest";
import { api, createAgent, createSession } from "./api";
import { HeadlessChat, type HeadlessChatOptions, plain } from "./chat-client";
import { type Step, script, uniqueId } from "./fake-model";

/** Registers an agent on a fresh script of the fake model; returns its name. */
export async function scriptedAgent(steps: Step[], config: Record<string, unknown> = {}): Promise<string> {
  const scriptId = uniqueId("chat");
  await script(scriptId, steps);
  const name = `chat-${crypto.randomUUID().slice(0, 8)}`;
  await createAgent({ name, model: `openai-compatible:${scriptId}`, ...config });
  return name;
}

/** A session of a scripted agent and a headless chat on it. */
export async function chatOn(steps: Step[], config: Record<string, unknown> = {}, options: Partial<HeadlessChatOptions> = {}) {
  const sid = await createSession(await scriptedAgent(steps, config));
  return { sid, chat: new HeadlessChat({ id: sid, ...options }) };
}

export async function serverMessages(sid: string): Promise<unknown[]> {
  const res = await api("GET", `/v1/sessions/${sid}/messages`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/**
 * What every chat test checks: every chunk passed uiMessageChunkSchema, every stream had the protocol's
 * headers and ended with [DONE] (unless `cut`), and the conversation a reload gets equals the client's.
 */
export async function expectConsistent(chat: HeadlessChat, sid: string, cut: Set<number> = new Set()): Promise<void> {
  await chat.allChunks();
  expect(chat.log.failures, "chunks failing uiMessageChunkSchema").toEqual([]);
  for (const [i, exchange] of chat.log.exchanges.entries()) {
    if (exchange.status !== 200) continue;
    expect(exchange.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(exchange.headers.get("content-type")).toBe("text/event-stream");
    if (!cut.has(i)) expect((await exchange.raw).endsWith("data: [DONE]\n\n"), `response ${i} ends with [DONE]`).toBe(true);
  }
  expect(await serverMessages(sid)).toEqual(plain(chat.messages));
}

export const textOf = (message: { parts: { type: string; text?: string }[] } | undefined) =>
  (message?.parts ?? [])
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");

export const partTypes = (message: { parts: { type: string }[] } | undefined) => (message?.parts ?? []).map((p) => p.type);
