// Token buckets per caller (a key id or a token subject), one object per caller: exact wherever the
// requests arrive, unlike the platform's rate-limiting binding, whose counts are per location and
// eventually consistent. Buckets live in memory: an evicted limiter starts full again, which only ever
// errs towards letting a caller through.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter extends DurableObject<Env> {
  private readonly buckets = new Map<string, Bucket>();

  /** Takes one token from the `kind` bucket (refilled at `perMinute`); when empty, how long until the next one. */
  async take(kind: string, perMinute: number): Promise<{ ok: true } | { ok: false; retry_after_s: number }> {
    const now = Date.now();
    const rate = perMinute / 60_000;
    const bucket = this.buckets.get(kind) ?? { tokens: perMinute, at: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.at) * rate);
    bucket.at = now;
    this.buckets.set(kind, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retry_after_s: Math.max(1, Math.ceil((1 - bucket.tokens) / rate / 1000)) };
  }
}
