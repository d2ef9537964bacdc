// Rate limits per caller (RATE_LIMIT_REQUESTS_PER_MIN for every request, RATE_LIMIT_TURNS_PER_MIN for the
// operations declared to submit turns), answered with 429, Retry-After and the JSON envelope. Unset, nothing is counted.
import type { MiddlewareHandler } from "hono";
import { positiveSetting } from "../env";
import { ApiError } from "../protocol/errors";
import type { Operation } from "../protocol/operations/operation";
import type { AppEnv } from "./http";

export const rateLimit =
  (kind: Operation["rateLimit"]): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const requests = kind === "none" ? null : positiveSetting(c.env.RATE_LIMIT_REQUESTS_PER_MIN, null);
    const turns = kind === "turn" ? positiveSetting(c.env.RATE_LIMIT_TURNS_PER_MIN, null) : null;
    // Public operations (the event catalog) get no guards, so no principal: there is no caller to count them
    // against; should one ever reach here without a principal, it is not counted (was a 500).
    const principal = c.get("principal") as AppEnv["Variables"]["principal"] | undefined;
    if (principal && (requests !== null || turns !== null)) {
      const caller = principal.kind === "key" ? principal.id : `token:${principal.subject}`;
      const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(caller));
      for (const [counted, perMinute] of [
        ["requests", requests],
        ["turns", turns],
      ] as const) {
        if (perMinute === null) continue;
        const taken = await limiter.take(counted, perMinute);
        if (!taken.ok) {
          c.header("retry-after", String(taken.retry_after_s));
          throw new ApiError("rate_limited", `Too many ${counted} from this caller (${perMinute} a minute); retry in ${taken.retry_after_s} s`);
        }
      }
    }
    await next();
  };
