// Inputs for the API fuzz (test/routes/fuzz.test.ts): a seeded PRNG, bodies sampled from the OpenAPI document's JSON
// Schemas (with real ids where a field names one), and the hostile values and mutations applied to them.
import { prng } from "./prng";

/** The seeded PRNG (./prng.ts) with the draws the fuzz makes, so that a seed replays the same requests. */
export class Rng {
  readonly next: () => number;

  constructor(seed: number) {
    this.next = prng(seed);
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

export const nested = (depth: number, leaf: unknown = "leaf"): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

const manyKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

export const HOSTILE_STRINGS = [
  "",
  " ",
  "x".repeat(5000),
  "\u0000",
  "\ud800",
  "../../etc/passwd",
  "%252e%252e%252f",
  "..%c0%af",
  "%u002e",
  "ses_000000000000000000000000",
  "ses_../../x",
  "<script>",
  "-1",
  "0x10",
  "1e400",
  "99999999999999999",
  "8640000000000001",
  "+275760-09-13T00:00:00.000Z",
  "2026-13-45T99:99:99Z",
  "NaN",
  "null",
  "true",
  "[]",
  "{}",
  "*",
  "a,b",
  "metadata.x",
  "🙂".repeat(100),
];

const HOSTILE_NUMBERS = [-1, 0, 0.5, 1, 59, 1e308, -1e308, 2 ** 53, 2 ** 31, -(2 ** 63), 1e-308, 8640000000000001];

export function hostileValue(rng: Rng): unknown {
  switch (rng.int(9)) {
    case 0:
      return rng.pick(HOSTILE_STRINGS);
    case 1:
      return rng.pick(HOSTILE_NUMBERS);
    case 2:
      return rng.pick([null, true, false]);
    case 3:
      return rng.pick([[], {}, [null], ["a", 1, {}], { "": 1 }, JSON.parse('{"__proto__":{"polluted":1}}'), { constructor: "x" }]);
    case 4:
      return nested(rng.pick([6, 63, 64, 65, 3000]));
    case 5:
      return manyKeys(rng.pick([101, 1000]));
    case 6:
      return { big: "x".repeat(rng.pick([16_385, 200_000])) };
    case 7:
      return Array.from({ length: rng.pick([10, 1000]) }, () => rng.pick(HOSTILE_STRINGS));
    default:
      return rng.pick(HOSTILE_STRINGS).repeat(3);
  }
}

type Schema = Record<string, any>;

export interface SampleContext {
  rng: Rng;
  /** The OpenAPI document, for `$ref`. */
  doc: { components?: { schemas?: Record<string, Schema> } };
  /** A value for a field of this name (a real id, a reachable URL), or undefined to sample the schema. */
  hint: (field: string) => unknown;
}

function resolve(schema: Schema | undefined, doc: SampleContext["doc"]): Schema {
  let s = schema ?? {};
  for (let i = 0; s.$ref && i < 20; i++) s = doc.components?.schemas?.[String(s.$ref).split("/").pop()!] ?? {};
  return s;
}

/** A value of `schema`, mostly valid: a random choice among alternatives, optional fields half of the time. */
export function sample(schema: Schema | undefined, ctx: SampleContext, depth = 0): unknown {
  const s = resolve(schema, ctx.doc);
  const { rng } = ctx;
  if (depth > 6) return null;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return rng.pick(s.enum);
  const alternatives = s.anyOf ?? s.oneOf ?? s.allOf;
  if (Array.isArray(alternatives) && alternatives.length > 0) return sample(rng.pick(alternatives), ctx, depth + 1);
  const type = Array.isArray(s.type) ? rng.pick(s.type as string[]) : (s.type ?? (s.properties ? "object" : s.items ? "array" : undefined));
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const required: string[] = s.required ?? [];
      for (const [key, prop] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
        if (!required.includes(key) && !rng.chance(0.5)) continue;
        const hinted = ctx.hint(key);
        out[key] = hinted !== undefined && rng.chance(0.8) ? hinted : sample(prop, ctx, depth + 1);
      }
      return out;
    }
    case "array":
      return Array.from({ length: rng.int(3) + (s.minItems ?? 0) }, () => sample(s.items, ctx, depth + 1));
    case "integer":
    case "number": {
      const min = s.minimum ?? s.exclusiveMinimum ?? 0;
      const max = s.maximum ?? s.exclusiveMaximum ?? min + 100;
      const n = min + rng.next() * (max - min);
      return type === "integer" ? Math.round(n) : n;
    }
    case "boolean":
      return rng.chance(0.5);
    case "null":
      return null;
    case "string":
      return s.format === "date-time" ? new Date(Date.now() + 3600_000).toISOString() : "fuzz".slice(0, Math.max(1, s.maxLength ?? 4));
    default:
      return hostileValue(rng);
  }
}

/** `body` changed one way: a field removed, replaced by a hostile value or added, or the whole body replaced. */
export function mutate(body: unknown, rng: Rng): unknown {
  const isObject = body !== null && typeof body === "object" && !Array.isArray(body);
  const copy = isObject ? { ...(body as Record<string, unknown>) } : body;
  const keys = isObject ? Object.keys(copy as object) : [];
  switch (rng.int(6)) {
    case 0:
      return body;
    case 1:
      if (keys.length > 0) delete (copy as Record<string, unknown>)[rng.pick(keys)];
      return copy;
    case 2:
      if (keys.length > 0) (copy as Record<string, unknown>)[rng.pick(keys)] = hostileValue(rng);
      return copy;
    case 3:
      if (isObject) (copy as Record<string, unknown>)[rng.pick(["metadata", "extra", "__proto__", "agent", "input"])] = hostileValue(rng);
      return copy;
    case 4:
      if (isObject) (copy as Record<string, unknown>).metadata = rng.pick([nested(3000), nested(6), manyKeys(101), { big: "x".repeat(20_000) }]);
      return copy;
    default:
      return hostileValue(rng);
  }
}

/** Bodies that are not valid JSON, or JSON of no useful shape. */
export const RAW_BODIES = ["{", '{"a":', "[", "]", "nul", '"unterminated', "\u0000", "{}}", "1e999999", "[".repeat(5000), '{"a":1,"a":2}', "\ufeff{}"];

/** Content-Type headers a body is sent under (null: none at all). */
export const MEDIA_TYPES: (string | null)[] = [
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  "Application/JSON",
  "application/vnd.api+json",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/jsonx",
  null,
];
