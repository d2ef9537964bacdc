// Text deltas arrive one network read at a time, and each write separated by I/O costs the object its own
// SQLite commit (docs/performance.md). The batcher lets the first delta after a quiet spell through at
// once (no added latency to the first token) and gathers the ones that follow for at most `windowMs`, so
// a fast stream costs one transaction and one broadcast per window instead of one per delta.
import type { EventDraft } from "../protocol/events";

export const DELTA_WINDOW_MS = 20;

export class DeltaBatcher {
  private pending: EventDraft[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastFlush = 0;

  /** `flush` commits whatever `take()` returns; the batcher calls it when a window closes. */
  constructor(
    private readonly flush: () => void,
    private readonly windowMs = DELTA_WINDOW_MS,
  ) {}

  /** Queues deltas; true when the caller should commit now (the window is open and nothing waits). */
  add(drafts: EventDraft[]): boolean {
    this.pending.push(...drafts);
    if (this.timer) return false;
    const wait = this.lastFlush + this.windowMs - Date.now();
    if (wait <= 0) return true;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, wait);
    return false;
  }

  /** Puts back deltas a failed commit took, ahead of any queued since; the next commit takes them again. */
  restore(drafts: EventDraft[]): void {
    this.pending = [...drafts, ...this.pending];
  }

  /** The queued deltas, oldest first; every commit takes them first, so the log keeps their order. */
  take(): EventDraft[] {
    if (this.pending.length === 0) return [];
    const drafts = this.pending;
    this.pending = [];
    this.lastFlush = Date.now();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return drafts;
  }
}
