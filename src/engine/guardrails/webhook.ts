// The webhook rule: an external moderation service, reached through the tools' fetch and TOOL_URL_ALLOWLIST.
// It gets POST {stage, rule, text, session_id, turn_id} and answers 2xx {flagged, reason?}. No answer within
// timeout_ms is the verdict `failed: "timeout"`, and any other non-answer (a non-2xx status, a body that is
// not a verdict, a URL no longer allowed) is `failed: "error"`: either way the rule fires (fails closed).
import { z } from "zod";
import { errorMessage } from "../../protocol/errors";
import type { GuardrailStage } from "../../protocol/guardrails";
import { callTimeout, readCapped } from "../tools/http-io";
import type { Turn } from "../turn-context";
import { urlAllowed } from "../url-allowlist";
import type { CallRule, Decision } from "./run";

const AnswerSchema = z.object({ flagged: z.boolean(), reason: z.string().optional() });
const MAX_ANSWER_BYTES = 10_000;

export async function askWebhook(rule: Extract<CallRule, { type: "webhook" }>, text: string, stage: GuardrailStage, id: string, turn: Turn): Promise<Decision> {
  const { fetch, urlAllowlist, session_id } = turn.ports.tool;
  if (!urlAllowed(rule.url, urlAllowlist)) return { flagged: true, failed: "error", reason: "the URL is not under TOOL_URL_ALLOWLIST" };
  const timeout = callTimeout(rule.timeout_ms, turn.signal);
  try {
    const res = await fetch(rule.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ stage, rule: id, text, session_id, turn_id: turn.root.turn_id }),
      redirect: "manual",
      signal: timeout.signal,
    });
    const body = await readCapped(res, MAX_ANSWER_BYTES);
    if (!res.ok) return { flagged: true, failed: "error", reason: `the webhook answered HTTP ${res.status}` };
    const answer = AnswerSchema.safeParse(JSON.parse(body));
    if (!answer.success) return { flagged: true, failed: "error", reason: "the webhook's answer was not {flagged, reason?}" };
    return { flagged: answer.data.flagged, ...(answer.data.reason ? { reason: answer.data.reason.slice(0, 500) } : {}) };
  } catch (err) {
    if (turn.signal.aborted) throw err;
    if (timeout.timedOut()) return { flagged: true, failed: "timeout", reason: `no answer within ${rule.timeout_ms} ms` };
    return { flagged: true, failed: "error", reason: `the webhook failed: ${errorMessage(err).slice(0, 200)}` };
  } finally {
    timeout.clear();
  }
}
