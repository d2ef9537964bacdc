// The deterministic guardrail rules (regex, pii, max_length), compiled once per config: each finds what it
// matches in a text and can replace it. A value that is not a string (tool arguments and results, an answer
// under output_schema) is checked string by string, so a redaction never breaks its JSON.
import type { GuardrailRule, PiiEntity } from "../../protocol/guardrails";
import { compileSafeRegex, RegexBoundError, type SafeRegex } from "../../protocol/safe-regex";

export type DeterministicRule = Extract<GuardrailRule, { type: "regex" | "pii" | "max_length" }>;

/** What a rule found: a reason naming what matched (never the matched text), and the value with it replaced. */
export interface Finding {
  reason: string;
  redacted: unknown;
  /** The rule could not finish (a redaction past its bound): it fired on the whole text. */
  failed?: "error";
}

export interface CompiledRule {
  /** Null when nothing matched; `redact` asks for the replaced value too. */
  check(value: unknown, redact: boolean): Finding | null;
}

/** Luhn's checksum: most digit runs that look like a card number are not one. */
function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616's mod-97 check of an IBAN (letters count as 10..35). */
function ibanValid(raw: string): boolean {
  const s = raw.replace(/ /g, "");
  const moved = s.slice(4) + s.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const n = code >= 65 ? code - 55 : code - 48;
    rest = n >= 10 ? (rest * 100 + n) % 97 : (rest * 10 + n) % 97;
  }
  return rest === 1;
}

/** A match: its text and where it starts. */
type Match = { 0: string; index?: number };
type Find = (s: string) => Iterable<Match>;

/** Whether the UTF-16 unit at `i` is a word character (\\w): A-Z a-z 0-9 _ (false outside the text). */
function isWord(s: string, i: number): boolean {
  const c = s.charCodeAt(i); // NaN outside the text
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** Whether the character at `i` may be in an email's local part: [A-Za-z0-9._%+-]. */
function isEmailLocal(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return isWord(s, i) || c === 46 || c === 37 || c === 43 || c === 45;
}

const EMAIL_DOMAIN = /[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/y;

/**
 * The matches of \b[A-Za-z0-9._%+-]+@<EMAIL_DOMAIN>, found from each "@" outwards. As one regex, each word
 * boundary of a long run without an "@" rescans the run to its end (quadratic); here the local part is read
 * back from its "@" no further than the previous "@" or match, and the domain forward to the next "@".
 */
function* emails(s: string): Generator<Match> {
  let from = 0;
  for (let at = s.indexOf("@"); at !== -1; at = s.indexOf("@", at + 1)) {
    let start = at;
    while (start > from && isEmailLocal(s, start - 1)) start--;
    // The regex would have started at the run's leftmost word boundary (\b: a word character on one side only).
    while (start < at && isWord(s, start - 1) === isWord(s, start)) start++;
    EMAIL_DOMAIN.lastIndex = at + 1;
    if (start === at || !EMAIL_DOMAIN.test(s)) continue;
    from = EMAIL_DOMAIN.lastIndex;
    yield { 0: s.slice(start, from), index: start };
  }
}

/** A regex's matches in a text, in order and not overlapping. */
const regexFind =
  (re: RegExp): Find =>
  (s) =>
    s.matchAll(re);

/**
 * Each entity's matches, and a check of a match where the pattern alone finds too much. Every repetition of these
 * patterns but the email's is bounded, so V8 spends bounded work at each start and a scan is linear in the text
 * (bench/guardrails.mjs runs hostile texts); the email has its own scan.
 */
const PII: Record<PiiEntity, { find: Find; valid?: (m: string) => boolean }> = {
  email: { find: emails },
  credit_card: { find: regexFind(/\b\d(?:[ -]?\d){12,18}\b/g), valid: (m) => luhn(m.replace(/[ -]/g, "")) },
  iban: { find: regexFind(/\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g), valid: ibanValid },
  us_ssn: { find: regexFind(/\b\d{3}-\d{2}-\d{4}\b/g) },
  phone: { find: regexFind(/(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\) ?|\d{2,4}[ .-])\d{3,4}[ .-]?\d{3,4}(?!\w)/g) },
  ip_address: {
    find: regexFind(/\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b|\b(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}\b/g),
  },
};
/** Checked in this order, so a card number is not also taken for a phone number. */
const PII_ORDER: PiiEntity[] = ["email", "credit_card", "iban", "us_ssn", "phone", "ip_address"];

/** Applies `fn` to every string of a JSON value (keys stay as they are). */
export function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === "string") return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)]));
  return value;
}

/** Whether some string of a JSON value satisfies `test`. */
function someString(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === "string") return test(value);
  if (Array.isArray(value)) return value.some((v) => someString(v, test));
  if (value && typeof value === "object") return Object.values(value).some((v) => someString(v, test));
  return false;
}

/** A value as one text (what max_length measures and what a judge or webhook reads). */
export function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value ?? null);
}

/** Whether a text holds a (valid) match, and the text with each (valid) match replaced. */
function matcher(find: Find, valid: ((m: string) => boolean) | undefined, replacement: string) {
  const hit = (s: string): boolean => {
    for (const m of find(s)) if (!valid || valid(m[0])) return true;
    return false;
  };
  const replace = (s: string): string => {
    let out = "";
    let last = 0;
    for (const m of find(s)) {
      if (valid && !valid(m[0])) continue;
      out += s.slice(last, m.index) + replacement;
      last = (m.index ?? 0) + m[0].length;
    }
    return out + s.slice(last);
  };
  return { hit, replace };
}

/**
 * A regex rule's redaction. A text whose matches cost more than their bound (safe-regex.ts, readBound) is
 * redacted whole: the rule fails closed, like a judge or webhook that gives no answer.
 */
function redactMatches(re: SafeRegex, value: unknown): Finding {
  const over: RegexBoundError[] = [];
  const redacted = mapStrings(value, (s) => {
    try {
      return re.replaceAll(s, "[redacted]");
    } catch (err) {
      if (!(err instanceof RegexBoundError)) throw err;
      over.push(err);
      return "[redacted]";
    }
  });
  if (over.length === 0) return { reason: "matched the pattern", redacted };
  return { reason: `${over[0]!.message}: the whole text is redacted`, redacted, failed: "error" };
}

export function compileRule(rule: DeterministicRule): CompiledRule {
  switch (rule.type) {
    case "regex": {
      // Compiled when the agent was saved (protocol/guardrails.ts), so this compiles.
      const re = compileSafeRegex(rule.pattern, rule.flags);
      return {
        check: (value, redact) =>
          someString(value, re.test) ? (redact ? redactMatches(re, value) : { reason: "matched the pattern", redacted: value }) : null,
      };
    }
    case "pii": {
      const entities = PII_ORDER.filter((e) => rule.entities.includes(e)).map((e) => ({ entity: e, ...matcher(PII[e].find, PII[e].valid, `[${e}]`) }));
      return {
        check: (value, redact) => {
          const found = entities.filter((e) => someString(value, e.hit));
          if (found.length === 0) return null;
          const redacted = redact ? found.reduce((v, e) => mapStrings(v, e.replace), value) : value;
          return { reason: `found ${found.map((e) => e.entity).join(", ")}`, redacted };
        },
      };
    }
    case "max_length":
      return {
        check: (value, redact) => {
          const text = asText(value);
          if (text.length <= rule.chars) return null;
          // A non-string value cut short is no longer JSON: it becomes the cut text.
          return { reason: `${text.length} characters, over ${rule.chars}`, redacted: redact ? text.slice(0, rule.chars) : value };
        },
      };
  }
}
