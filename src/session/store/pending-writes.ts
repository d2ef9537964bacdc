// Events that wait a moment to be written together. Each write separated by I/O costs the object its own
// SQLite commit (locally an fsync too: docs/performance.md), and each write within one task its own
// transaction, checkpoint and broadcast, so two kinds of events may wait briefly:
// - text deltas: the first after a quiet spell is written once the network read that brought it has been
//   handled (a timer of 0: the rest of that read comes along, not a fixed delay), the ones that follow gather
//   for at most `deltaWindowMs`;
// - held events (the loop offers them, see test/engine/loop.test.ts), with their checkpoint, so what becomes true
//   together takes one commit: tool results, held at most `holdMs`, with the step's other results and the next model
//   call's start; an answer that names tool calls, held until the task ends, with those calls' starts.
// Every commit takes what waits first, in order, with the latest held checkpoint, so the log keeps its order
// and a checkpoint never holds a result whose event is not in the log.
import type { Hold } from "../../engine/ports";
import type { EventDraft } from "../../protocol/events";

export const DELTA_WINDOW_MS = 20;
export const HOLD_MS = 2;

export interface Waiting {
  drafts: EventDraft[];
  /** Writes the latest checkpoint of the held events (the whole turn state, so the latest serves all). */
  checkpoint: (() => void) | null;
}

export class PendingWrites {
  private waiting: Waiting = { drafts: [], checkpoint: null };
  private timer: ReturnType<typeof setTimeout> | null = null;
  private due = 0;
  private lastFlush = 0;

  /** `flush` commits whatever `take()` returns; called when a window or a hold ends. */
  constructor(
    private readonly flush: () => void,
    private readonly deltaWindowMs = DELTA_WINDOW_MS,
    private readonly holdMs = HOLD_MS,
  ) {}

  /** Queues deltas, to be flushed right away after a quiet spell or when the window since the last flush ends. */
  deltas(drafts: EventDraft[]): void {
    this.waiting.drafts.push(...drafts);
    if (!this.timer) this.flushIn(Math.max(0, this.lastFlush + this.deltaWindowMs - Date.now()));
  }

  /** Holds events with the checkpoint that records them: "step" for at most `holdMs`, "task" until this task ends. */
  hold(drafts: EventDraft[], checkpoint: () => void, hold: Hold = "step"): void {
    this.waiting.drafts.push(...drafts);
    this.waiting.checkpoint = checkpoint;
    this.flushIn(hold === "task" ? 0 : this.holdMs);
  }

  /** Puts back what a failed commit took, ahead of anything queued since; the next commit takes it again. */
  restore(taken: Waiting): void {
    this.waiting = { drafts: [...taken.drafts, ...this.waiting.drafts], checkpoint: this.waiting.checkpoint ?? taken.checkpoint };
  }

  /** What waits, oldest first; every commit takes it first, so the log keeps its order. */
  take(): Waiting {
    const taken = this.waiting;
    if (taken.drafts.length === 0 && !taken.checkpoint) return { drafts: [], checkpoint: null };
    this.waiting = { drafts: [], checkpoint: null };
    this.lastFlush = Date.now();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return taken;
  }

  /** Flushes within `ms` (an earlier flush already due stays). */
  private flushIn(ms: number): void {
    const due = Date.now() + ms;
    if (this.timer) {
      if (this.due <= due) return;
      clearTimeout(this.timer);
    }
    this.due = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, ms);
  }
}
