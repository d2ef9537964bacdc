// A fingerprint of what a model call is asked (docs/guides/fork-and-replay.md): model, system prompt, messages, tool schemas and
// parameters, hashed from a canonical JSON form. model.requested records it, so a replay of the turn can tell
// whether the request it would send now is the recorded one (and answer it from the recording) or not.
//
// Version 2 ("v2:<hex>", issue 38) hashes the messages as a chain seeded with the hash of the rest of the request
// (model, system prompt, tool schemas, parameters), each link the hash of the one before and the message's
// canonical text, so a step hashes only the messages that are new: the whole prompt hashed at every step cost a
// time that grew with the turn. Version 1 (bare hex: logs recorded before) hashed the whole
// canonical request at once; a replay compares a recorded fingerprint with the same version's.
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

export type FingerprintVersion = "v1" | "v2";

/** The version of a recorded fingerprint; null for one this runtime does not know. */
export function fingerprintVersion(hash: string): FingerprintVersion | null {
  if (/^[0-9a-f]{64}$/.test(hash)) return "v1";
  if (/^v2:[0-9a-f]{64}$/.test(hash)) return "v2";
  return null;
}

/**
 * The fingerprint (current version, v2) of the call as it goes to the provider (prompt, tool schemas,
 * parameters) for the model spec `model`; the recorded model of a replay hashes the calls it is asked the same way.
 */
export async function requestFingerprint(model: string, options: LanguageModelV3CallOptions, version: FingerprintVersion = "v2"): Promise<string> {
  const canonical = (m: object) => once(unmarked(m));
  if (version === "v1") return sha256Hex(canonicalRequest(model, options, options.prompt.map(canonical)));
  const leading = options.prompt.findIndex((m) => m.role !== "system");
  const split = leading === -1 ? options.prompt.length : leading;
  const seed = await seedOf(canonicalRequest(model, options, options.prompt.slice(0, split).map(canonical)));
  return `v2:${await promptChain(seed, options.prompt.slice(split))}`;
}

/** The last seed hashed: a turn's steps share it (same model, system prompt and tools), so it is hashed once. */
let lastSeed = { text: "", hash: "" };

async function seedOf(text: string): Promise<string> {
  if (lastSeed.text !== text) lastSeed = { text, hash: await sha256Hex(text) };
  return lastSeed.hash;
}

function canonicalRequest(model: string, options: LanguageModelV3CallOptions, prompt: unknown): string {
  const { tools, toolChoice, temperature, maxOutputTokens, responseFormat } = options;
  // Prompt cache marks are provider options, not what is asked: the fingerprint reads the unmarked parts.
  return canonicalJson({ model, prompt, tools: tools && once(unmarked(tools)), toolChoice, temperature, maxOutputTokens, responseFormat });
}

/** Each message's link: the chain before it, and the chain with it. */
const links = new WeakMap<object, { before: string; after: string }>();

/**
 * The hash chain of the prompt's messages. Each step's prompt repeats the conversation so far, the same objects
 * (toPrompt converts each message once), so a message's link is kept by identity and is hashed again only when
 * what precedes it changed.
 */
async function promptChain(seed: string, messages: LanguageModelV3CallOptions["prompt"]): Promise<string> {
  let chain = seed;
  for (const m of messages) {
    const message = unmarked(m);
    const link = links.get(message);
    if (link?.before === chain) {
      chain = link.after;
      continue;
    }
    // Canonical JSON holds no raw newline, so the separator keeps every link unambiguous. The text is not kept
    // (the link is): a long turn's conversation is not held twice in the isolate.
    const after = await sha256Hex(`${chain}\n${canonicalJson(message)}`);
    links.set(message, { before: chain, after });
    chain = after;
  }
  return chain;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

const seen = new WeakMap<object, Canonical>();

/** A part's canonical text, kept by identity: conversation parts and tool schemas never change once made. */
function once(value: object): Canonical {
  let canonical = seen.get(value);
  if (!canonical) {
    canonical = new Canonical(canonicalJson(value));
    seen.set(value, canonical);
  }
  return canonical;
}
