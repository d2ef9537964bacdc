// Quotas (PUT/GET/DELETE /v1/quotas, docs/guides/quotas.md): hard limits on spend, tokens and turns per
// deployment, API key, end user, resource or agent over a UTC day, a UTC month or a rolling window; the
// definition as written, and its state in the current window as read.
import { z } from "zod";
import { CanonicalId, KEY_ID } from "./principal-id";

export const QUOTA_SCOPE_KINDS = ["deployment", "key", "subject", "resource", "agent"] as const;
export type QuotaScopeKind = (typeof QUOTA_SCOPE_KINDS)[number];

/** The largest limit a quota takes: anything above it is a typo, not a limit (and would lose precision). */
export const MAX_QUOTA_USD = 1_000_000_000;
export const MAX_QUOTA_COUNT = 1_000_000_000_000;

export const QuotaScope = z
  .strictObject({
    kind: z
      .enum(QUOTA_SCOPE_KINDS)
      .describe(
        "deployment: every turn; key: turns an API key (or a token it minted) submitted; subject: a session's owner (end user); resource: a session's resource; agent: an agent's turns",
      ),
    id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "the one key id (key_<16 hex>), subject, resource or agent name it applies to; absent: each one separately (a limit per end user, say); none for deployment",
      ),
  })
  .superRefine((scope, ctx) => {
    if (scope.kind === "deployment" && scope.id !== undefined) ctx.addIssue({ code: "custom", path: ["id"], message: "a deployment scope names no id" });
    if (scope.kind === "key" && scope.id !== undefined && !KEY_ID.test(scope.id)) {
      ctx.addIssue({ code: "custom", path: ["id"], message: "must be a key id, key_ and 16 hex digits (the start of the key's SHA-256)" });
    }
    if ((scope.kind === "subject" || scope.kind === "resource") && scope.id !== undefined) {
      const parsed = CanonicalId.safeParse(scope.id);
      if (!parsed.success) ctx.addIssue({ code: "custom", path: ["id"], message: parsed.error.issues[0]?.message ?? "is not a canonical id" });
    }
  });
export type QuotaScope = z.infer<typeof QuotaScope>;

const count = (what: string) =>
  z.number().int("must be a whole number").min(0, "must not be negative").max(MAX_QUOTA_COUNT, `must be at most ${MAX_QUOTA_COUNT}`).optional().describe(what);

export const QuotaLimits = z
  .strictObject({
    usd: z
      .number()
      .min(0, "must not be negative")
      .max(MAX_QUOTA_USD, `must be at most ${MAX_QUOTA_USD}`)
      .optional()
      .describe("spend in USD at the models' prices (a model without a known price is refused under it)"),
    input_tokens: count("input tokens of model calls"),
    output_tokens: count("output tokens of model calls"),
    turns: count("turns started"),
    concurrent_turns: count("turns running at once (not per window)"),
  })
  .refine((l) => Object.values(l).some((v) => v !== undefined), { message: "must set at least one limit" });
export type QuotaLimits = z.infer<typeof QuotaLimits>;
export type QuotaDimension = keyof QuotaLimits;

/** A window: a UTC calendar day or month, or the last `rolling_seconds` (60 s to 366 days). */
export const QuotaWindow = z.union([
  z.enum(["day", "month"]),
  z.strictObject({ rolling_seconds: z.number().int().min(60, "must be at least 60 (a minute)").max(31_622_400, "must be at most 31622400 (366 days)") }),
]);
export type QuotaWindow = z.infer<typeof QuotaWindow>;

export const QuotaSpec = z
  .strictObject({
    scope: QuotaScope,
    limits: QuotaLimits,
    window: QuotaWindow.describe('"day" or "month" (UTC calendar), or {rolling_seconds}'),
    action: z
      .enum(["refuse", "pause"])
      .describe(
        "refuse: the turn fails quota_exceeded; pause: the turn waits (turn.paused) until the quota is raised, the window rolls over, or it is continued",
      ),
    warn_at: z
      .array(z.number().gt(0, "must be above 0").lt(1, "must be below 1 (a fraction of the limit)"))
      .max(5)
      .superRefine((fractions, ctx) => {
        // Each threshold warns once per window: the same one twice would be one warning, not two.
        fractions.forEach((f, i) => {
          const first = fractions.indexOf(f);
          if (first < i) ctx.addIssue({ code: "custom", path: [i], message: `repeats a threshold: ${f} is already at warn_at.${first}` });
        });
      })
      .optional()
      .describe("soft thresholds as fractions of each limit (0.8: 80 %), each once: crossing one emits quota.warning once per window"),
  })
  .meta({ id: "QuotaSpec" });
export type QuotaSpec = z.infer<typeof QuotaSpec>;

export const QuotaId = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.-]+$/, "letters, digits, '_', '-' and '.' only");

/** A stored quota. */
export type QuotaDefinition = QuotaSpec & { id: string; created_at: number; updated_at: number };

const Amounts = z.object({
  usd: z.number().optional(),
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  turns: z.number().optional(),
  concurrent_turns: z.number().optional(),
});

/** One subject's state of a quota in its current window. */
export const QuotaUsage = z.object({
  subject: z.string().describe("whom the counts are for: the scope's id, or (a scope without id) each one seen"),
  window_start: z.number().describe("ms since the epoch"),
  window_end: z.number().describe("when the window rolls over (a rolling window: when its oldest usage leaves it)"),
  used: Amounts.describe("settled usage, plus what model calls in flight have reserved"),
  remaining: Amounts,
});

export const QuotaSchema = QuotaSpec.extend({
  id: z.string(),
  created_at: z.number(),
  updated_at: z.number(),
  usage: z.array(QuotaUsage).optional().describe("GET /v1/quotas/:id: the state per subject in the current window"),
}).meta({ id: "Quota" });
export type QuotaView = z.infer<typeof QuotaSchema>;
export type QuotaUsage = z.infer<typeof QuotaUsage>;
export type QuotaAmounts = z.infer<typeof Amounts>;

/** What a quota object checks of a quota: its definition without the bookkeeping. */
export type QuotaRule = Pick<QuotaDefinition, "id" | "limits" | "window" | "action" | "warn_at">;

/** A soft threshold crossed (quota.warning). */
export type QuotaWarning = { quota_id: string; subject: string; threshold: number; dimension: QuotaDimension; used: number; limit: number };

/** A quota object's answer to a turn's start or a call's reservation. */
export type QuotaVerdict =
  | { ok: true }
  | {
      ok: false;
      quota_id: string;
      action: "refuse" | "pause";
      /** quota_exceeded: a limit would be crossed; quota_unavailable: the quota's object did not answer. */
      code: "quota_exceeded" | "quota_unavailable";
      message: string;
      /** When looking again may find room (the window rolls over); null: when a turn ends or the quota changes. */
      retry_at: number | null;
    };
