// The x-runtime-signature header of outbound deliveries: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
// with the subscription's secret. Deprecated: deliveries are signed per Standard Webhooks too
// (standard-webhooks.ts); this header goes in the release after next (docs/guides/schedules-and-subscriptions.md).

export const SIGNATURE_HEADER = "x-runtime-signature";
/** The batch's idempotency id: the same on every attempt of the same batch, across restarts. */
export const BATCH_ID_HEADER = "x-runtime-batch-id";

export async function signBody(secret: string, body: string, nowS: number): Promise<string> {
  return `t=${nowS},v1=${await hmacHex(secret, `${nowS}.${body}`)}`;
}

async function hmacHex(secret: string, data: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(data)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}
