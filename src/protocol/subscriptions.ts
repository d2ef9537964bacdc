// Outbound subscriptions (POST/GET/PATCH/DELETE /v1/sessions/:sid/subscriptions, and `subscriptions` on an
// agent's config): where a session's events are POSTed, which types, and how deliveries are signed.
import { z } from "zod";
import { EVENT_TYPES } from "./events";
import { refineOutboundPath } from "./outbound-url";

/** A signing secret: `whsec_<base64>` as Standard Webhooks gives it, or any other string (its UTF-8 bytes are the key). */
export const signingSecret = z.string().min(16).max(200);
export const WRITE_ONLY = 'write-only: an agent config reads it as "[redacted]"';

export const SubscriptionSpec = z.strictObject({
  url: z.string().max(2000).superRefine(refineOutboundPath).describe("receiver URL; must be under TOOL_URL_ALLOWLIST"),
  types: z
    .array(z.enum(EVENT_TYPES as [string, ...string[]]))
    .min(1)
    .max(100)
    .optional()
    .describe("event types to deliver (default: all)"),
  secret: signingSecret
    .optional()
    .describe(`signs each delivery per Standard Webhooks, and in the deprecated x-runtime-signature (default: generated, returned once); ${WRITE_ONLY}`),
  format: z.enum(["events", "otlp"]).optional().describe("events (default): the runtime's events; otlp: OpenTelemetry traces"),
});
export type SubscriptionSpec = z.infer<typeof SubscriptionSpec>;

export const CreateSubscriptionBody = SubscriptionSpec.extend({
  after: z.int().min(0).optional().describe("deliver the events after this sequence (0: the whole log); default: only events appended from now"),
}).meta({ id: "CreateSubscription" });
export type CreateSubscriptionBody = z.infer<typeof CreateSubscriptionBody>;

/** The longest overlap of a rotation: the replaced secret signs at most this long beside the new one. */
export const MAX_ROTATION_OVERLAP_S = 7 * 24 * 3600;

export const UpdateSubscriptionBody = z
  .strictObject({
    enabled: z.boolean().optional().describe("false disables; true enables again (a failing one retries at once)"),
    secret: signingSecret
      .optional()
      .describe("rotates the signing secret: deliveries are signed with this one, and with the replaced one too until the overlap ends"),
    overlap_s: z
      .int()
      .min(0)
      .max(MAX_ROTATION_OVERLAP_S)
      .optional()
      .describe("with secret: seconds the replaced secret keeps signing beside the new one (default 86400; 0 ends it at once)"),
  })
  .refine((b) => b.enabled !== undefined || b.secret !== undefined, { message: "give enabled, secret, or both" })
  .refine((b) => b.overlap_s === undefined || b.secret !== undefined, { message: "overlap_s goes with a new secret", path: ["overlap_s"] })
  .meta({ id: "UpdateSubscription" });
export type UpdateSubscriptionBody = z.infer<typeof UpdateSubscriptionBody>;

export const SubscriptionSchema = z
  .object({
    subscription_id: z.string(),
    url: z.string(),
    types: z.array(z.string()).nullable(),
    format: z.enum(["events", "otlp"]),
    cursor: z.number().describe("the last sequence delivered (or passed over as not matching)"),
    status: z.enum(["active", "failing", "disabled"]),
    attempts: z.number().describe("failed attempts of the current batch"),
    last_error: z.string().nullable(),
    next_attempt_at: z.number().describe("milliseconds since the epoch; 0 when not backing off"),
    previous_secret_until: z
      .number()
      .nullable()
      .describe("during a secret's rotation: until when (milliseconds since the epoch) the replaced secret signs too; null otherwise"),
    created_at: z.number(),
  })
  .meta({ id: "Subscription" });
export type Subscription = z.infer<typeof SubscriptionSchema>;
