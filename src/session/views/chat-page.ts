// A page of the conversation (GET /v1/sessions/:sid/messages?limit=&before=, docs/guides/use-chat.md): the newest
// `limit` messages before the message `before`, exactly as the whole conversation's fold (store/log-reads.ts) shows
// them, without folding the whole log. A turn's answer depends on its own events only, read through the log's
// index by turn; what one turn does to others (a rollback removes a turn, a regenerated answer hides the turns
// from the one it answers again, a start or a cancellation places a turn in the conversation's order) is in the
// submissions, rollbacks, starts and cancellations alone. So the page folds those of the newest turns, widening
// the window while it is short or names a turn before it, and the events of the turns whose messages it returns.
import type { UIMessage } from "ai";
import { ApiError } from "../../protocol/errors";
import type { RuntimeEvent } from "../../protocol/events";
import { ConversationFold } from "../../views/ui-messages";
import type { SessionStore } from "../store/session-store";

export interface PageQuery {
  limit: number;
  before?: string;
}

/** The page as a JSON array of UIMessages, oldest first. */
export function conversationPageJson(store: Pick<SessionStore, "eventsOfTurn" | "conversationReads">, query: PageQuery): string {
  const turnEvents = new Map<string, RuntimeEvent[]>();
  // Each turn has one submission, a start or a cancellation (both when cut) and at most one rollback: a window
  // of 3n rows holds about n turns or more.
  for (let count = 3 * (query.limit + 1); ; count *= 2) {
    const window = crossTurnEvents(store, count);
    const fold = new ConversationFold();
    for (const e of window.events) fold.pushAcross(e);
    if (fold.reachesBack && !window.whole) continue;
    const answer = (turnId: string) => {
      let events = turnEvents.get(turnId);
      if (!events) {
        events = store.eventsOfTurn(turnId);
        turnEvents.set(turnId, events);
      }
      // The submission is folded already; nothing of the turn before it counts (the whole fold has no turn yet).
      for (const e of events.slice(events.findIndex((x) => x.type === "turn.submitted") + 1)) fold.push(e);
    };
    const page = newestBefore(fold, query, answer);
    if (page.complete || window.whole) {
      if (!page.found) throw ApiError.validation([{ path: "before", reason: `names no message of the conversation ('${query.before}')` }]);
      return JSON.stringify(page.messages);
    }
  }
}

/**
 * The newest `count` events that act across turns, from the first submission among them on, oldest first; `whole`
 * when they reach the log's start. Read backwards from the log's end, so the rows read are those of the window's turns.
 */
function crossTurnEvents(store: Pick<SessionStore, "conversationReads">, count: number): { events: RuntimeEvent[]; whole: boolean } {
  const rows = store.conversationReads.newestCrossTurnEvents(count);
  const whole = rows.length < count;
  // Such an event before the window's first submission names a turn before it: the fold would only mark it unseen.
  const kept = whole ? rows : rows.slice(0, rows.findLastIndex((r) => r.type === "turn.submitted") + 1);
  return { events: kept.reverse().map((r) => JSON.parse(r.body) as RuntimeEvent), whole };
}

/**
 * Walks the fold's turns from the newest: past the message `before` (when given), then collecting messages,
 * folding a turn's events (`answer`) only when its messages are needed.
 */
function newestBefore(
  fold: ConversationFold,
  { limit, before }: PageQuery,
  answer: (turnId: string) => void,
): { messages: UIMessage[]; found: boolean; complete: boolean } {
  const out: UIMessage[] = [];
  let found = before === undefined;
  for (const turnId of fold.turnIds().reverse()) {
    if (found) {
      answer(turnId);
      out.unshift(...fold.messagesOf(turnId));
      if (out.length >= limit) return { messages: out.slice(-limit), found, complete: true };
      continue;
    }
    if (turnId !== before && fold.userIdOf(turnId) !== before) continue;
    answer(turnId);
    const messages = fold.messagesOf(turnId);
    const at = messages.findLastIndex((m) => m.id === before);
    if (at < 0) continue;
    found = true;
    out.unshift(...messages.slice(0, at));
    if (out.length >= limit) return { messages: out.slice(-limit), found, complete: true };
  }
  return { messages: out, found, complete: false };
}
