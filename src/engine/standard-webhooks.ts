// Signing per the Standard Webhooks specification, for subscription deliveries and webhook tool calls
// (docs/guides/schedules-and-subscriptions.md, "Verifying a delivery"): `webhook-id`, `webhook-timestamp` and
// `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one signature per secret, space-separated.
// Web Crypto only, so the engine stays free of platform imports.

/** A secret of the form the specification gives: `whsec_` and the key's bytes in base64. */
const WHSEC = /^whsec_((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;

/**
 * The HMAC key of a secret: the base64-decoded bytes of a `whsec_<base64>` secret; for any other secret
 * (one given before the runtime spoke Standard Webhooks, or a generated `whsec_<hex>_<hex>` of then, which is
 * not base64) its UTF-8 bytes, which a receiver gives as `new Webhook(secret, {format: "raw"})`.
 */
export function signingKey(secret: string): Uint8Array {
  const m = WHSEC.exec(secret);
  if (m && m[1]!.length > 0) return Uint8Array.from(atob(m[1]!), (c) => c.charCodeAt(0));
  return new TextEncoder().encode(secret);
}

/** A new secret: `whsec_` and 24 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(24))))}`;
}

/** The three headers of a signed request; `secrets` the current one first, then one being rotated out. */
export async function standardWebhookHeaders(id: string, body: string, secrets: readonly string[], nowS: number): Promise<Record<string, string>> {
  const signed = new TextEncoder().encode(`${id}.${nowS}.${body}`);
  const signatures = await Promise.all(secrets.map(async (s) => `v1,${base64(await hmac(signingKey(s), signed))}`));
  return { "webhook-id": id, "webhook-timestamp": String(nowS), "webhook-signature": signatures.join(" ") };
}

export async function hmac(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  // The casts: the engine's and the worker's lib types disagree on what backs a Uint8Array.
  const k = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, data as BufferSource));
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}
