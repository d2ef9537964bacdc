// What the AI SDK chat routes (docs/guides/use-chat.md) read from a session's log: where a turn's events begin, and the
// conversation folded into UIMessage[] (src/views/ui-messages.ts).
import { ApiError } from "../../protocol/errors";
import type { RuntimeEvent } from "../../protocol/events";
import { ConversationFold } from "../../views/ui-messages";
import type { SessionStore } from "../store/session-store";

const PAGE = 1000;

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
