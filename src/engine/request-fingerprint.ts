// A fingerprint of what a model call is asked (docs/guides/fork-and-replay.md): model, system prompt, messages, tool schemas and
// parameters, hashed from a canonical JSON form. model.requested records it, so a replay of the turn can tell
// whether the request it would send now is the recorded one (and answer it from the recording) or not.
//
// The canonical text repeats the conversation so far at every step, so it is not built and hashed whole: a
// SHA-256 state over the text up to each message is kept, and a step hashes only its new messages and the text
// after them. The hash is the same as of the whole text at once (logs recorded before replay).

// The part of node:crypto used here, declared for programs without Node's types (a tenant's Worker too).
/// <reference path="./node-crypto.d.ts" />
import { createHash, type Hash } from "node:crypto";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { unmarked } from "./prompt-cache";

/** Text already in canonical form. */
class Canonical {
  constructor(readonly text: string) {}
}

/**
 * JSON with object keys sorted at every level, so equal requests give equal text whatever their key order.
 * Built by appending to one string, without the intermediate arrays of entries (every step canonicalizes its
 * new messages; docs/performance-history.md).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (value instanceof Canonical) return value.text;
  // A file's bytes (file-parts.ts): as base64, not as an object of millions of numbered keys.
  if (value instanceof Uint8Array) return JSON.stringify(base64(value));
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += `${i > 0 ? "," : ""}${canonicalJson(value[i] ?? null)}`;
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  // Object.keys holds the same keys as Object.entries, and the default sort orders them by UTF-16 code units, as `<` does.
  const keys = Object.keys(object).sort();
  let out = "{";
  for (const k of keys) {
    const v = object[k];
    if (v === undefined) continue;
    out += `${out.length > 1 ? "," : ""}${quoted(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/** Object keys as JSON strings, kept: the requests' few keys repeat in every message. */
const quotedKeys = new Map<string, string>();
const quoted = (key: string): string => {
  let q = quotedKeys.get(key);
  if (q === undefined) {
    q = JSON.stringify(key);
    if (quotedKeys.size < 1_000) quotedKeys.set(key, q);
  }
  return q;
};

/**
 * SHA-256 (hex) of the call as it goes to the provider (prompt, tool schemas, parameters) for the model spec
 * `model`, from its canonical JSON; the recorded model of a replay hashes the calls it is asked the same way.
 */
export function requestFingerprint(model: string, options: LanguageModelV3CallOptions): string {
  const { prompt } = options;
  const split = leadingSystem(prompt);
  const { head, tail } = frame(model, options, prompt.slice(0, split));
  return throughMessages(head, split > 0, prompt.slice(split))
    .copy()
    .update(tail)
    .digest("hex");
}

/**
 * A conversation's hashing so far, by its first message after the system prompt (each turn's conversation, each
 * sub-agent's, has its own): the text before the messages, the messages hashed, and the hash state after them.
 */
interface Run {
  head: string;
  hashed: object[];
  hash: Hash;
}

const runs = new WeakMap<object, Run>();

/**
 * The hash state after `head` and the messages. Each step's prompt repeats the conversation so far, the same
 * objects (toPrompt converts each message once), so while the messages hashed before are the prompt's first ones,
 * only the new ones are hashed; otherwise (a trimmed or rewritten conversation) it starts over.
 */
function throughMessages(head: string, afterSystem: boolean, prompt: object[]): Hash {
  // Prompt cache marks are provider options, not what is asked: the unmarked messages are hashed. Only a few
  // messages are marked (copies), so the others are compared as they are, without a lookup each.
  const messageAt = (i: number): object => unmarked(prompt[i]!);
  const hashedAt = (m: object, i: number) => prompt[i] === m || messageAt(i) === m;
  if (prompt.length === 0) return createHash("sha256").update(head);
  const first = messageAt(0);
  let run = runs.get(first);
  if (run?.head !== head || run.hashed.length > prompt.length || !run.hashed.every(hashedAt)) {
    run = { head, hashed: [], hash: createHash("sha256").update(head) };
    runs.set(first, run);
  }
  for (let i = run.hashed.length; i < prompt.length; i++) {
    const message = messageAt(i);
    // The message's text is hashed and dropped: a long turn's conversation is not held twice in the isolate.
    run.hash.update((afterSystem || i > 0 ? "," : "") + canonicalJson(message));
    run.hashed.push(message);
  }
  return run.hash;
}

function leadingSystem(prompt: LanguageModelV3CallOptions["prompt"]): number {
  const at = prompt.findIndex((m) => m.role !== "system");
  return at === -1 ? prompt.length : at;
}

/** No canonical text holds a raw control character (JSON escapes them), so this marks the messages' place. */
const PLACE = new Canonical("\u0000");

/**
 * The canonical text of the request before its messages (up to `"prompt":[` and the system messages) and after
 * them (from the closing bracket): its keys are sorted, so the prompt sits between model and the parameters.
 */
function frame(model: string, options: LanguageModelV3CallOptions, system: object[]): { head: string; tail: string } {
  const { tools, toolChoice, temperature, maxOutputTokens, responseFormat } = options;
  // Prompt cache marks are provider options, not what is asked: the fingerprint reads the unmarked parts.
  const text = canonicalJson({ model, prompt: PLACE, tools: tools && once(unmarked(tools)), toolChoice, temperature, maxOutputTokens, responseFormat });
  const at = text.indexOf(PLACE.text);
  return { head: `${text.slice(0, at)}[${system.map((m) => canonicalJson(unmarked(m))).join(",")}`, tail: `]${text.slice(at + PLACE.text.length)}` };
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

const seen = new WeakMap<object, Canonical>();

/** The tool schemas' canonical text, kept by identity: a turn's steps share them, and they never change once made. */
function once(value: object): Canonical {
  let canonical = seen.get(value);
  if (!canonical) {
    canonical = new Canonical(canonicalJson(value));
    seen.set(value, canonical);
  }
  return canonical;
}
