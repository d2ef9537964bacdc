// The x-runtime-signature header of outbound deliveries: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
// with the subscription's secret. The timestamp is signed with the body, so a receiver that refuses old
// timestamps refuses a replayed request.

export const SIGNATURE_HEADER = "x-runtime-signature";
/** The batch's idempotency id: the same on every attempt of the same batch, across restarts. */
export const BATCH_ID_HEADER = "x-runtime-batch-id";

export async function signBody(secret: string, body: string, nowS: number): Promise<string> {
  return `t=${nowS},v1=${await hmacHex(secret, `${nowS}.${body}`)}`;
}

/** Whether `header` signs `body` with `secret`, at most `toleranceS` seconds before or after `nowS`. */
export async function verifySignature(secret: string, body: string, header: string, nowS: number, toleranceS = 300): Promise<boolean> {
  const parts = Object.fromEntries(header.split(",").map((p) => p.split("=", 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowS - t) > toleranceS || !parts.v1) return false;
  const expected = await hmacHex(secret, `${t}.${body}`);
  // Constant time in the length of the signature: the comparison does not stop at the first difference.
  let diff = expected.length ^ parts.v1.length;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ (parts.v1.charCodeAt(i) || 0);
  return diff === 0;
}

async function hmacHex(secret: string, data: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(data)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}
