// Webhook tools (`HttpTool`, docs/guides/tools-and-permissions.md): POST the call as JSON to the configured URL, answer with the body.
// Every attempt of a call carries the same Idempotency-Key (and, with a secret, a Standard Webhooks signature
// under it as webhook-id); a 429, 502, 503 or 504 or a connection failure is retried, and the call's receipt
// (its key, last status and attempts) goes into its tool.result.
import type { HttpToolSpec } from "../../protocol/agent-config";
import { standardWebhookHeaders } from "../standard-webhooks";
import { urlAllowed } from "../url-allowlist";
import { callTimeout, readCapped } from "./http-io";
import { idempotencyKey } from "./idempotency-key";
import { type ToolContext, type ToolDefinition, ToolError } from "./types";

/** At most this much of a response is read; the loop then caps what it keeps at max_tool_result_bytes. */
const MAX_RESPONSE_BYTES = 1_000_000;
/** Attempts of one call: the first and two retries. */
export const MAX_ATTEMPTS = 3;
/** Statuses that say the request was not handled and may be sent again. */
const RETRYABLE = new Set([429, 502, 503, 504]);
/** The longest Retry-After honoured; a longer one ends the call with the status. */
const MAX_RETRY_AFTER_MS = 30_000;

export function httpTool(spec: HttpToolSpec): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    permission_class: spec.permission_class,
    parallel_safe: spec.parallel_safe,
    // A receiver that deduplicates by the key makes a resend after a restart safe.
    idempotent: spec.idempotent ?? false,
    ...(spec.lock ? { lock: spec.lock } : {}),
    async execute(args, ctx) {
      // The allowlist may have changed since the agent was saved.
      if (!urlAllowed(spec.url, ctx.urlAllowlist)) throw new ToolError(`URL of tool "${spec.name}" is not allowlisted`);
      const key = await idempotencyKey(ctx);
      const body = JSON.stringify({ tool: spec.name, args, session_id: ctx.session_id, turn_id: ctx.turn_id, tool_call_id: ctx.tool_call_id });
      const secrets = [spec.secret, spec.previous_secret].filter((s): s is string => s !== undefined);
      let res: Response | null = null;
      let attempts = 0;
      try {
        for (;;) {
          attempts += 1;
          res = null;
          const sent = await attempt(spec, ctx, key, body, secrets);
          res = sent.res;
          const wait = attempts < MAX_ATTEMPTS ? retryDelay(sent, attempts) : null;
          if (wait === null) break;
          await res?.body?.cancel();
          await sleep(wait, ctx.signal);
        }
      } finally {
        ctx.receipt?.({ idempotency_key: key, status: res?.status ?? null, attempts });
      }
      if (!res) throw new ToolError(`Tool "${spec.name}" could not be reached after ${attempts} attempts`);
      if (res.status >= 300 && res.status < 400) throw new ToolError(`HTTP ${res.status}: redirects are not followed`);
      const text = await readCapped(res, MAX_RESPONSE_BYTES);
      if (!res.ok) throw new ToolError(`HTTP ${res.status}: ${text}`);
      if ((res.headers.get("content-type") ?? "").includes("application/json")) {
        try {
          return JSON.parse(text);
        } catch {
          return text;
        }
      }
      return text;
    },
  };
}

/** One attempt: the response, or null when the connection failed (a timeout ends the call). */
async function attempt(spec: HttpToolSpec, ctx: ToolContext, key: string, body: string, secrets: string[]): Promise<{ res: Response | null }> {
  const timeout = callTimeout(spec.timeout_ms, ctx.signal);
  try {
    const signed = secrets.length > 0 ? await standardWebhookHeaders(key, body, secrets, Math.floor(ctx.now() / 1000)) : {};
    const res = await ctx.fetch(spec.url, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key, ...signed },
      body,
      signal: timeout.signal,
      redirect: "manual", // a redirect could leave the allowlist
    });
    return { res };
  } catch (err) {
    if (timeout.timedOut()) throw new ToolError(`Tool "${spec.name}" timed out after ${spec.timeout_ms} ms`);
    if (ctx.signal.aborted) throw err;
    return { res: null };
  } finally {
    timeout.clear();
  }
}

/** How long to wait before the next attempt; null when the outcome is final. */
function retryDelay({ res }: { res: Response | null }, attempts: number): number | null {
  if (res && !RETRYABLE.has(res.status)) return null;
  const backoff = 1000 * 2 ** (attempts - 1);
  const after = res?.headers.get("retry-after");
  if (after === null || after === undefined || !/^\d+$/.test(after)) return backoff;
  const ms = Number(after) * 1000;
  return ms <= MAX_RETRY_AFTER_MS ? ms : null;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}
