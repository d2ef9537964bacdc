// Reads of a session's log that its views and streams share: a cursor checked against the log, where a turn's
// events begin, its events parsed in order, and the conversation folded into UIMessage[] (src/views/ui-messages.ts)
// for the AI SDK chat routes (docs/guides/use-chat.md).
import { ApiError } from "../../protocol/errors";
import type { RuntimeEvent } from "../../protocol/events";
import { ConversationFold } from "../../views/ui-messages";
import type { SessionStore } from "./session-store";

const PAGE = 1000;

/** Refuses a cursor beyond the log's last sequence (the field `name`). */
export function checkCursor(store: Pick<SessionStore, "lastSequence">, after: number, name = "after"): void {
  if (after > store.lastSequence) {
    throw ApiError.validation([{ path: name, reason: `is beyond the last sequence (${store.lastSequence})` }]);
  }
}

/** The sequence just before the turn's first event: a stream of the turn reads the log after it. */
export function turnCursor(store: Pick<SessionStore, "conversationReads">, turnId: string): number {
  const first = store.conversationReads.firstSequenceOf(turnId);
  if (first === null) throw ApiError.notFound("Turn", turnId);
  return first - 1;
}

/** The session's events after `after`, read from the store page by page. */
export function* loggedEvents(store: Pick<SessionStore, "readEvents">, after: number): Generator<RuntimeEvent> {
  for (let cursor = after; ; ) {
    const page = store.readEvents(cursor, PAGE);
    for (const row of page) yield JSON.parse(row.body) as RuntimeEvent;
    if (page.length < PAGE) return;
    cursor = page[page.length - 1]!.sequence;
  }
}

/** The conversation as a JSON array of UIMessages, folded page by page from the log. */
export function conversationJson(store: Pick<SessionStore, "readEvents">): string {
  const fold = new ConversationFold();
  for (const e of loggedEvents(store, 0)) fold.push(e);
  return JSON.stringify(fold.messages());
}
