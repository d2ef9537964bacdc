// The deterministic guardrail rules (regex, pii, max_length), compiled once per config: each finds what it
// matches in a text and can replace it. A value that is not a string (tool arguments and results, an answer
// under output_schema) is checked string by string, so a redaction never breaks its JSON.
import type { GuardrailRule, PiiEntity } from "../../protocol/guardrails";

export type DeterministicRule = Extract<GuardrailRule, { type: "regex" | "pii" | "max_length" }>;

/** What a rule found: a reason naming what matched (never the matched text), and the value with it replaced. */
export interface Finding {
  reason: string;
  redacted: unknown;
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

/** Each entity's pattern, and a check of a match where the pattern alone would find too much. */
const PII: Record<PiiEntity, { re: RegExp; valid?: (m: string) => boolean }> = {
  // Anchored on \b, not on lookbehinds: V8 scans a text several times faster for these (bench/guardrails.mjs).
  email: { re: /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g },
  credit_card: { re: /\b\d(?:[ -]?\d){12,18}\b/g, valid: (m) => luhn(m.replace(/[ -]/g, "")) },
  iban: { re: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, valid: ibanValid },
  us_ssn: { re: /\b\d{3}-\d{2}-\d{4}\b/g },
  phone: { re: /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\) ?|\d{2,4}[ .-])\d{3,4}[ .-]?\d{3,4}(?!\w)/g },
  ip_address: {
    re: /\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b|\b(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}\b/g,
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

function matcher(re: RegExp, valid: ((m: string) => boolean) | undefined, replacement: string) {
  const hit = (s: string): boolean => {
    re.lastIndex = 0;
    if (!valid) return re.test(s);
    for (const m of s.matchAll(re)) if (valid(m[0])) return true;
    return false;
  };
  const replace = valid ? (s: string): string => s.replace(re, (m) => (valid(m) ? replacement : m)) : (s: string): string => s.replace(re, replacement);
  return { hit, replace };
}

export function compileRule(rule: DeterministicRule): CompiledRule {
  switch (rule.type) {
    case "regex": {
      const m = matcher(new RegExp(rule.pattern, `${rule.flags}g`), undefined, "[redacted]");
      return {
        check: (value, redact) =>
          someString(value, m.hit) ? { reason: "matched the pattern", redacted: redact ? mapStrings(value, m.replace) : value } : null,
      };
    }
    case "pii": {
      const entities = PII_ORDER.filter((e) => rule.entities.includes(e)).map((e) => ({ entity: e, ...matcher(PII[e].re, PII[e].valid, `[${e}]`) }));
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
