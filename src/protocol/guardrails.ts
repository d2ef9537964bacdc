// Guardrails in the agent config (docs/guides/guardrails.md): rules per stage, each a check of some text with an action. The
// deterministic kinds (regex, pii, max_length) may redact; the model judge and the webhook only decide, so
// they may block or warn. Regexes are compiled here (RE2 syntax, safe-regex.ts), so an invalid one is 422 when the agent is saved.
import { z } from "zod";
import { modelSpecField } from "./model-spec";
import { outboundUrl } from "./outbound-url";
import { compileSafeRegex, type SafeRegex } from "./safe-regex";

export const GUARDRAIL_STAGES = ["input", "output", "tool_input", "tool_output"] as const;
export type GuardrailStage = (typeof GUARDRAIL_STAGES)[number];

export const PII_ENTITIES = ["email", "phone", "credit_card", "iban", "ip_address", "us_ssn"] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];

const ruleName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be 1-64 characters of A-Z a-z 0-9 _ . -")
  .optional()
  .describe("how events and errors name the rule (default: <stage>.<index>, e.g. input.0)");
const anyAction = z.enum(["block", "redact", "warn"]).default("block");
const decideAction = z.enum(["block", "warn"], { message: 'must be "block" or "warn" (only regex, pii and max_length rules can redact)' }).default("block");

const RegexRule = z
  .strictObject({
    type: z.literal("regex"),
    name: ruleName,
    pattern: z.string().min(1).max(2000).describe("RE2 syntax (no backreferences or lookaround): matching takes time linear in the text"),
    flags: z
      .string()
      .regex(/^(?!.*(.).*\1)[imsu]*$/, "must be some of i, m, s, u, each once")
      .default("")
      .describe("g is implied"),
    action: anyAction,
  })
  .superRefine((r, ctx) => {
    let re: SafeRegex;
    try {
      re = compileSafeRegex(r.pattern, r.flags);
    } catch (err) {
      ctx.addIssue({ code: "custom", path: ["pattern"], message: (err as Error).message });
      return;
    }
    // A pattern that matches nothing at all would fire on every text (and redact between every character).
    if (re.test("")) ctx.addIssue({ code: "custom", path: ["pattern"], message: "matches the empty string" });
  });

const PiiRule = z.strictObject({
  type: z.literal("pii"),
  name: ruleName,
  entities: z.array(z.enum(PII_ENTITIES)).min(1).max(PII_ENTITIES.length),
  action: anyAction,
});

const MaxLengthRule = z.strictObject({
  type: z.literal("max_length"),
  name: ruleName,
  chars: z.int().min(1).max(10_000_000),
  action: anyAction.describe("redact: cut the text to `chars`"),
});

const ModelRule = z.strictObject({
  type: z.literal("model"),
  name: ruleName,
  model: modelSpecField,
  instructions: z.string().min(1).max(20_000).describe("what the judge checks; it answers {flagged, reason}"),
  action: decideAction,
});

const WebhookRule = z.strictObject({
  type: z.literal("webhook"),
  name: ruleName,
  url: outboundUrl(),
  timeout_ms: z.int().min(100).max(30_000).default(5_000).describe("no answer in time: the rule fires (verdict with failed: timeout)"),
  action: decideAction,
});

export const GuardrailRuleSchema = z.discriminatedUnion("type", [RegexRule, PiiRule, MaxLengthRule, ModelRule, WebhookRule]);
export type GuardrailRule = z.infer<typeof GuardrailRuleSchema>;

const stageRules = z.array(GuardrailRuleSchema).max(16).optional();

export const GuardrailsSchema = z.strictObject({
  input: stageRules.describe("on the turn's input and on live messages, before any model sees them"),
  output: stageRules.describe("on the final answer; redaction needs output_mode buffered"),
  tool_input: stageRules.describe("on a tool call's arguments before it runs; a block is an error result"),
  tool_output: stageRules.describe("on a tool's result before the model sees it; a block is an error result"),
});
export type Guardrails = z.infer<typeof GuardrailsSchema>;

/** Rules that decide by a call (a model, a webhook) rather than by looking at the text. */
export function isDeterministic(rule: GuardrailRule): rule is Extract<GuardrailRule, { type: "regex" | "pii" | "max_length" }> {
  return rule.type === "regex" || rule.type === "pii" || rule.type === "max_length";
}

/** How events and errors name a rule. */
export function ruleId(stage: GuardrailStage, rule: GuardrailRule, index: number): string {
  return rule.name ?? `${stage}.${index}`;
}
