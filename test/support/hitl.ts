// Shared by the human-input suites: sessions whose scripted model asks questions or calls a tool that needs
// approval (the fake server's echo webhook as `deploy`), and reading the answers out of the log.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { api } from "./api";
import { type Step, script, toolURL, uniqueId } from "./fake-model";

export const KEY_HASH = /^key_[0-9a-f]{16}$/;
export const stub = (sid: string) => env.SESSIONS.get(env.SESSIONS.idFromName(sid));
export const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

/** The deploy webhook tool on the fake server: {env (required), replicas}. */
export const DEPLOY = {
  name: "deploy",
  description: "Deploys",
  url: toolURL("echo"),
  parameters: { type: "object", properties: { env: { type: "string", enum: ["staging", "prod"] }, replicas: { type: "integer" } }, required: ["env"] },
};
export const deployCall = (args: Record<string, unknown>): Step => ({ tool_calls: [{ name: "deploy", arguments: args }] });

/** A session whose scripted model may call ask_user. */
export async function asking(steps: Step[], config: Record<string, unknown> = {}): Promise<{ sid: string; scriptId: string }> {
  const scriptId = uniqueId("ask");
  await script(scriptId, steps);
  const res = await api("POST", "/v1/sessions", { agent: { name: "asker", model: `openai-compatible:${scriptId}`, tools: ["ask_user"], ...config } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { sid: res.body.session_id, scriptId };
}

export const respond = (sid: string, actionId: string, body: unknown, headers?: Record<string, string>) =>
  api("POST", `/v1/sessions/${sid}/actions/${actionId}`, body, headers);

/** The one event of `type` for a tool call. */
export function only(log: any[], type: string, toolCallId: string): any {
  const found = log.filter((e) => e.type === type && e.tool_call_id === toolCallId);
  expect(found, `${type} for ${toolCallId}`).toHaveLength(1);
  return found[0];
}

/** Tool messages of a Chat Completions request, as [tool_call_id, content]. */
export const toolMessages = (request: any) => request.messages.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content]);
