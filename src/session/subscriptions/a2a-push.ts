// A2A push notification configs (docs/guides/a2a.md, "Push notifications"): each is a row of the subscriptions
// table in format "a2a", so it is delivered as subscriptions are (in order, signed per Standard Webhooks,
// retried with backoff, under the URL allowlist). What differs: it follows one task (a turn), reads it from the
// task's start, and each request carries one StreamResponse folded from the log (src/views/a2a-task.ts): a status
// update, or an artifact update; the answer's text goes as one artifact once written, not chunk by chunk. After
// the task's last status it stops. Its token and credentials are write-only.
import { newSigningSecret } from "../../engine/standard-webhooks";
import { parseAllowlist, urlAllowed } from "../../engine/url-allowlist";
import { type StreamResponse, type TaskPushNotificationConfig, TERMINAL_STATES } from "../../protocol/a2a";
import { ApiError } from "../../protocol/errors";
import type { RuntimeEvent } from "../../protocol/events";
import { redactUrl } from "../../protocol/redact";
import { A2aTaskFold, parseTaskId } from "../../views/a2a-task";
import type { SettingsHost, TurnsHost } from "../hosts";
import { newRow, type SubscriptionRow } from "./subscription-rows";
import type { SubscriptionTable } from "./subscriptions";

/** Push configs one task may hold. */
export const MAX_PUSH_CONFIGS = 10;

/** What the row's `a2a` column holds. */
interface PushSpec {
  config_id: string;
  task_id: string;
  turn_id: string;
  /** The runtime's origin as the request that made the config reached it: the deliveries' file URLs are under it. */
  origin?: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
}

/** A config as the reads answer it: the token and the credentials are never read back. */
export interface PushConfigView {
  id: string;
  taskId: string;
  url: string;
  authentication?: { scheme: string };
}

export type PushConfigInput = Omit<TaskPushNotificationConfig, "tenant">;

type PushSession = TurnsHost & SettingsHost;

const specOf = (row: SubscriptionRow): PushSpec => JSON.parse(row.a2a!) as PushSpec;

function view(row: SubscriptionRow): PushConfigView {
  const spec = specOf(row);
  const auth = spec.authentication ? { authentication: { scheme: spec.authentication.scheme } } : {};
  return { id: spec.config_id, taskId: spec.task_id, url: redactUrl(row.url), ...auth };
}

export class A2aPushConfigs {
  constructor(
    private readonly s: PushSession,
    private readonly table: Pick<SubscriptionTable, "insert" | "remove" | "ofFormat">,
  ) {}

  /** Adds (or replaces, by id) a config; its generated signing secret is answered here only. */
  create(input: PushConfigInput, origin: string): PushConfigView & { signingSecret?: string } {
    const ref = parseTaskId(input.taskId);
    const first = ref ? this.s.store.conversationReads.firstSequenceOf(ref.turn_id) : null;
    if (!ref || first === null) throw ApiError.notFound("Task", input.taskId);
    if (!urlAllowed(input.url, parseAllowlist(this.s.bindings().TOOL_URL_ALLOWLIST)))
      throw ApiError.validation([{ path: "params.url", reason: "is not under any TOOL_URL_ALLOWLIST prefix" }]);
    const config_id = input.id ?? crypto.randomUUID();
    const existing = this.ofTask(input.taskId);
    const replaced = existing.find((r) => specOf(r).config_id === config_id);
    if (!replaced && existing.length >= MAX_PUSH_CONFIGS) throw new ApiError("conflict", `task ${input.taskId} already has ${MAX_PUSH_CONFIGS} push configs`);
    const spec: PushSpec = { config_id, task_id: input.taskId, turn_id: ref.turn_id, origin };
    if (input.token !== undefined) spec.token = input.token;
    if (input.authentication) spec.authentication = input.authentication;
    const secret = input.signingSecret ?? newSigningSecret();
    const row = newRow({
      subscription_id: `a2a_${crypto.randomUUID().replaceAll("-", "")}`,
      url: input.url,
      types: null,
      secret,
      format: "a2a",
      // From the task's start: the receiver gets every status of the task, whenever the config was made.
      cursor: first - 1,
      a2a: JSON.stringify(spec),
    });
    this.table.insert(row, replaced?.subscription_id);
    return { ...view(row), ...(input.signingSecret ? {} : { signingSecret: secret }) };
  }

  get(taskId: string, id: string): PushConfigView {
    return view(this.existing(taskId, id));
  }

  list(taskId: string): PushConfigView[] {
    return this.ofTask(taskId).map(view);
  }

  delete(taskId: string, id: string): Record<string, never> {
    this.table.remove(this.existing(taskId, id).subscription_id);
    return {};
  }

  private ofTask(taskId: string): SubscriptionRow[] {
    return this.table.ofFormat("a2a").filter((r) => specOf(r).task_id === taskId);
  }

  private existing(taskId: string, id: string): SubscriptionRow {
    const row = this.ofTask(taskId).find((r) => specOf(r).config_id === id);
    if (!row) throw ApiError.notFound("Push notification config", id);
    return row;
  }
}

/**
 * What a push config delivers for `e`, in the order the task's stream has it: artifact updates (the answer's text
 * whole once its model call ends), and the status `e` left the task in (an event that moves it twice, working
 * then waiting again, is delivered as where it left the task). The task's first snapshot is not sent.
 */
function pushItems(fold: A2aTaskFold, e: RuntimeEvent): StreamResponse[] {
  const writing = fold.writing;
  const made = fold.push(e).map((o) => o.event);
  const items: StreamResponse[] = [];
  if (writing && fold.writing !== writing) {
    const artifact = structuredClone(writing);
    items.push({ artifactUpdate: { taskId: fold.task.id, contextId: fold.ref.session_id, artifact, append: false, lastChunk: true } });
  }
  items.push(...made.filter((o) => "artifactUpdate" in o && o.artifactUpdate.lastChunk));
  const status = made.findLast((o) => "statusUpdate" in o);
  if (status) items.push(status);
  return items;
}

/**
 * The next event after `row.cursor`, up to `last`, that gives the config's task something to deliver: the
 * request bodies it makes (one StreamResponse each), the event's sequence, and `done` when the task ended
 * there; no bodies when nothing up to `last` does.
 */
export function pushBatch(
  row: SubscriptionRow,
  eventsOfTurn: (turnId: string) => RuntimeEvent[],
  last: number,
): { end: number; bodies: string[]; done: boolean } {
  const spec = specOf(row);
  const fold = new A2aTaskFold(parseTaskId(spec.task_id)!, spec.origin ?? "");
  for (const e of eventsOfTurn(spec.turn_id)) {
    if (e.sequence > last) break;
    const items = pushItems(fold, e);
    if (items.length > 0 && e.sequence > row.cursor)
      return { end: e.sequence, bodies: items.map((i) => JSON.stringify(i)), done: TERMINAL_STATES.has(fold.state) };
  }
  return { end: last, bodies: [], done: false };
}

/** The A2A headers of a delivery: the config's token, and its authentication as an Authorization header. */
export function pushHeaders(row: SubscriptionRow): Record<string, string> {
  if (row.format !== "a2a") return {};
  const spec = specOf(row);
  const auth = spec.authentication;
  return {
    ...(spec.token !== undefined ? { "x-a2a-notification-token": spec.token } : {}),
    ...(auth ? { authorization: auth.credentials ? `${auth.scheme} ${auth.credentials}` : auth.scheme } : {}),
  };
}
