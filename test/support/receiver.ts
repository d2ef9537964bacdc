// A webhook receiver for outbound subscriptions, served by the fake server under /v1/_receiver/<id>
// (on the tool URL allowlist). PUT .../<id>/plan {fail_first, hang_on} scripts it: the first `fail_first`
// requests get a 503, the requests numbered in `hang_on` (1-based) are never answered; the rest get 200 (with
// `answer` as a JSON body when given: a guardrail webhook's verdict; with `length`, sent with its Content-Length rather
// than chunked; a 503 says `retry-after: <retry_after>` when given).
// GET .../<id>/requests lists every request received: its headers of interest and raw body.
import type { IncomingMessage, ServerResponse } from "node:http";

interface Plan {
  fail_first: number;
  hang_on: number[];
  answer?: unknown;
  length?: boolean;
  retry_after?: number;
}
type Received = {
  signature: string | undefined;
  batch_id: string | undefined;
  idempotency_key: string | undefined;
  /** An A2A push notification's token and Authorization header. */
  a2a_token?: string | undefined;
  authorization?: string | undefined;
  /** The Standard Webhooks headers: webhook-id, webhook-timestamp, webhook-signature. */
  webhook: Record<string, string | undefined>;
  body: string;
  answered: number | "hung";
};

const plans = new Map<string, Plan>();
const received = new Map<string, Received[]>();

/** Handles a /v1/_receiver/ request; false for any other path. */
export async function handleReceiver(req: IncomingMessage, res: ServerResponse, path: string, readBody: () => Promise<string>): Promise<boolean> {
  const m = /^\/v1\/_receiver\/([^/]+)(\/plan|\/requests)?$/.exec(path);
  if (!m) return false;
  const id = decodeURIComponent(m[1]!);
  const log = received.get(id) ?? [];
  received.set(id, log);
  if (m[2] === "/plan") {
    plans.set(id, { fail_first: 0, hang_on: [], ...(JSON.parse(await readBody()) as Partial<Plan>) });
    res.writeHead(204).end();
  } else if (m[2] === "/requests") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(log));
  } else {
    const body = await readBody();
    const plan = plans.get(id) ?? { fail_first: 0, hang_on: [] };
    const n = log.length + 1;
    const entry: Received = {
      signature: req.headers["x-runtime-signature"] as string | undefined,
      batch_id: req.headers["x-runtime-batch-id"] as string | undefined,
      idempotency_key: req.headers["idempotency-key"] as string | undefined,
      a2a_token: req.headers["x-a2a-notification-token"] as string | undefined,
      authorization: req.headers.authorization,
      webhook: Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, req.headers[h] as string | undefined])),
      body,
      answered: plan.hang_on.includes(n) ? "hung" : n <= plan.fail_first ? 503 : 200,
    };
    log.push(entry);
    if (entry.answered === "hung") return true; // the client gives up (its timeout) and closes the connection
    if (entry.answered === 200 && plan.answer !== undefined) {
      const answer = JSON.stringify(plan.answer);
      const length = plan.length ? { "content-length": String(Buffer.byteLength(answer)) } : {};
      res.writeHead(200, { "content-type": "application/json", ...length }).end(answer);
    } else {
      const retry = entry.answered === 503 && plan.retry_after !== undefined ? { "retry-after": String(plan.retry_after) } : {};
      res.writeHead(entry.answered, { "content-type": "text/plain", ...retry }).end(entry.answered === 200 ? "ok" : "unavailable");
    }
  }
  return true;
}
