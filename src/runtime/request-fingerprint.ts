// A fingerprint of what a model call is asked (docs/guides/fork-and-replay.md): model, system prompt, messages, tool schemas and
// parameters, hashed from a canonical JSON form. model.requested records it, so a replay of the turn can tell
// whether the request it would send now is the recorded one (and answer it from the recording) or not.
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { unmarked } from "./prompt-cache";

/** Text already in canonical form. */
class Canonical {
  constructor(readonly text: string) {}
}

/** JSON with object keys sorted at every level, so equal requests give equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value instanceof Canonical) return value.text;
  // A file's bytes (file-parts.ts): as base64, not as an object of millions of numbered keys.
  if (value instanceof Uint8Array) return JSON.stringify(base64(value));
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * SHA-256 (hex) of the call as it goes to the provider (prompt, tool schemas, parameters) for the model spec
 * `model`; the recorded model of a replay hashes the calls it is asked the same way.
 */
export async function requestFingerprint(model: string, options: LanguageModelV3CallOptions): Promise<string> {
  const { prompt, tools, toolChoice, temperature, maxOutputTokens, responseFormat } = options;
  // Each step's request repeats the conversation so far and the tool schemas: the same objects, never changed
  // once made (toPrompt converts each message once), so their canonical text is kept (by identity) instead of
  // being built again every step.
  // Prompt cache marks are provider options, not what is asked: the fingerprint reads the unmarked parts.
  const messages = prompt.map((m) => once(unmarked(m)));
  const text = canonicalJson({ model, prompt: messages, tools: tools && once(unmarked(tools)), toolChoice, temperature, maxOutputTokens, responseFormat });
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

const seen = new WeakMap<object, Canonical>();

function once(value: object): Canonical {
  let canonical = seen.get(value);
  if (!canonical) {
    canonical = new Canonical(canonicalJson(value));
    seen.set(value, canonical);
  }
  return canonical;
}
