// Test helpers (run inside workerd) for scripting the fake Chat Completions server started by
// global-setup.ts. Point a model id at a script id: each completion request pops the next step.
import { env } from "cloudflare:test";

/** A tool call the scripted model makes (see Step). */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** An object (JSON-encoded on the wire) or a raw string sent as-is. */
  arguments: unknown;
}

/** One completion request's scripted answer. */
export interface Step {
  text?: string;
  tool_calls?: ScriptedToolCall[];
  /** Characters per streamed text delta (default 4). */
  chunk_size?: number;
  /** Pause before each streamed chunk (default 0). */
  delay_ms?: number;
  /** Answer with this HTTP error instead of a completion (with a retry-after-ms header when given); `{header:<name>}` in the message is the request's header. */
  error?: { status: number; message: string; retry_after_ms?: number };
  /** Stream headers and the first text chunk, then never finish until the client disconnects. */
  hang?: boolean;
  /** Stream this many chunks, then never finish until the client disconnects. */
  stall_after?: number;
  /** cached_tokens: prompt tokens read from the prompt cache (part of prompt_tokens). */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
}

/** Base URL of the fake server, e.g. http://127.0.0.1:PORT/v1 (same value the worker sees). */
export const baseURL: string = (env as unknown as { OPENAI_COMPATIBLE_BASE_URL: string }).OPENAI_COMPATIBLE_BASE_URL;

/** A collision-free script id (the fake server is shared by every test file and run). */
export function uniqueId(prefix = "script"): string {
  return `${prefix}-${crypto.randomUUID()}`;
}

/** Store (or replace) the script `id`; also clears its recorded requests. */
export async function script(id: string, steps: Step[]): Promise<void> {
  const res = await fetch(`${baseURL}/_scripts/${encodeURIComponent(id)}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ steps }),
  });
  if (!res.ok) throw new Error(`fake-openai: scripting ${id} failed: ${res.status} ${await res.text()}`);
  await res.text();
}

/** URL of a fake webhook tool endpoint: "echo", "fail", or "slow?ms=N". */
export function toolURL(endpoint: string): string {
  return `${baseURL}/_tools/${endpoint}`;
}

/** URL of a gated endpoint: a request to it is held until releaseGate(id) (support/gates.ts). */
export function gateURL(id: string): string {
  return `${baseURL}/_gates/${encodeURIComponent(id)}`;
}

/** What gate `id` holds: requests still open, and those their client closed before the release. */
export async function gateState(id: string): Promise<{ held: number; dropped: number }> {
  const res = await fetch(`${gateURL(id)}/state`);
  return (await res.json()) as { held: number; dropped: number };
}

/** Waits until gate `id`'s state passes `reached` (a request held, one dropped); throws naming `what` after 10 s. */
export async function waitForGate(id: string, reached: (state: { held: number; dropped: number }) => boolean, what: string): Promise<void> {
  for (let i = 0; !reached(await gateState(id)); i++) {
    if (i > 500) throw new Error(`gate ${id}: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Answers every request gate `id` holds with `answer` (JSON); says how many got it. */
export async function releaseGate(id: string, answer: unknown): Promise<{ delivered: number; dropped: number }> {
  const res = await fetch(`${gateURL(id)}/release`, { method: "POST", body: JSON.stringify(answer) });
  return (await res.json()) as { delivered: number; dropped: number };
}

/** Parsed Chat Completions request bodies received for script `id`, in order. */
export async function requests(id: string): Promise<any[]> {
  return getJson(`${baseURL}/_scripts/${encodeURIComponent(id)}/requests`);
}

/** Bodies received by the fake webhook-tool endpoints (/v1/_tools/*), in order. */
export async function toolRequests(): Promise<any[]> {
  return getJson(`${baseURL}/_tools/requests`);
}

async function getJson(url: string): Promise<any[]> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fake-openai: GET ${url} failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as any[];
}
