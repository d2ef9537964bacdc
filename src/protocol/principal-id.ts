// How a principal is named where decisions are recorded (`by` of action events), and who counts once toward
// an approval quorum. An API key is `key_<16 hex>` (the start of its SHA-256, never the key); a browser token
// is `tok_<subject>@key_<16 hex>`, its subject as written and the id of the key that minted it.
import { z } from "zod";
import { codePointLabel } from "./lookalikes";

/** The id of an API key: `key_` and the first 16 hex digits of its SHA-256. */
export const KEY_ID = /^key_[0-9a-f]{16}$/;

/** The recorded id of a token principal: its subject as written, and the key that minted it. */
export const tokenPrincipalId = (subject: string, key: string): string => `tok_${subject}@${key}`;

/** The key id closes the id and has a fixed shape, so a subject holding `@key_...` itself still parses. */
const TOKEN_ID = /^tok_([\s\S]*)@(key_[0-9a-f]{16})$/;

/**
 * A subject as one person: NFKC (full-width and compatibility forms folded), format and control characters
 * (zero-width spaces, direction marks) removed, runs of white space made one space, trimmed, and case-folded.
 * `Reviewer`, `reviewer `, `ｒｅｖｉｅｗｅｒ` and `review\u200Ber` are all `reviewer`.
 */
export function normalizeSubject(subject: string): string {
  return subject
    .normalize("NFKC")
    .replace(/\p{Cf}/gu, "")
    .replace(/\s+/gu, " ")
    .replace(/\p{Cc}/gu, "")
    .trim()
    .toUpperCase()
    .toLowerCase()
    .normalize("NFKC");
}

// What no canonical subject holds: control (Cc) and format (Cf: zero-width spaces, direction marks) characters,
// lone surrogates (a JWT would carry them as U+FFFD), line and paragraph separators, and the other default
// ignorable code points (variation selectors, Hangul fillers), which render as nothing.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

/**
 * Why `subject` is not canonical, or null when it is: a subject that trimming, NFKC or removing invisible and
 * control characters would change could stand for another one that looks the same, so it is neither minted
 * (422) nor accepted in a token (401). Case is kept: `Alice` and `alice` are two subjects, each canonical, and
 * owners are compared exactly. (A quorum folds further, normalizeSubject, since that only makes it harder.)
 */
export function subjectFlaw(subject: string): string | null {
  const invisible = INVISIBLE.exec(subject)?.[0];
  if (invisible !== undefined) return `must not hold invisible or control characters (${codePointLabel(invisible)})`;
  if (subject.trim() !== subject) return "must not have leading or trailing whitespace";
  if (subject.normalize("NFKC") !== subject) {
    const changed = [...subject].find((ch) => ch.normalize("NFKC") !== ch);
    return `must be in Unicode NFKC form${changed === undefined ? "" : ` (${codePointLabel(changed)} is ${JSON.stringify(changed.normalize("NFKC"))})`}`;
  }
  return null;
}

/**
 * Who `by` (a recorded principal id) is toward a quorum. A key is its key id; a token is its normalized
 * subject under the key that minted it, or, with `distinctKeys` (APPROVAL_QUORUM_DISTINCT_KEYS), only that key,
 * so that every principal one key speaks for (itself and the tokens it minted) counts once. A token recorded
 * before tokens named their key counts by its normalized subject; anything else (`runtime`) as written.
 */
export function approverIdentity(by: string, distinctKeys: boolean): string {
  if (KEY_ID.test(by)) return by;
  const token = TOKEN_ID.exec(by);
  if (token) return distinctKeys ? token[2]! : `${token[2]}/${normalizeSubject(token[1]!)}`;
  if (by.startsWith("tok_")) return `tok/${normalizeSubject(by.slice(4))}`;
  return by;
}

/** APPROVAL_QUORUM_DISTINCT_KEYS: on for `true` (or `1`, `yes`, `on`); unset, empty, `false`, `0`, `no` or `off` is off. Any other value is on, failing closed. */
export function distinctKeysSetting(value: string | undefined): boolean {
  const v = (value ?? "").trim().toLowerCase();
  return !["", "false", "0", "no", "off"].includes(v);
}

/** An end user's id as a token's subject, a session's owner or a resource: 1-200 characters, canonical (subjectFlaw). */
export const CanonicalId = z
  .string()
  .min(1)
  .max(200)
  .superRefine((s, ctx) => {
    const flaw = subjectFlaw(s);
    if (flaw !== null) ctx.addIssue({ code: "custom", message: flaw });
  });
