// Where a quota's window starts and ends at a moment, and the buckets its usage is counted in: a calendar
// window (a UTC day or month) is one bucket; a rolling window is counted in 60 buckets of a sixtieth of it
// (at least a second), and a bucket counts while any part of it is inside the window, so a rolling window
// counts at most a sixtieth of its length too much, never too little.
import type { QuotaWindow } from "../../protocol/quotas";

export interface WindowSpan {
  start: number;
  end: number;
}

/** The bucket `at` falls in: its start and length. */
export function bucketOf(window: QuotaWindow, at: number): { start: number; ms: number } {
  if (typeof window === "string") {
    const span = calendar(window, at);
    return { start: span.start, ms: span.end - span.start };
  }
  const ms = bucketMs(window.rolling_seconds);
  return { start: Math.floor(at / ms) * ms, ms };
}

/** Buckets starting after this count toward the window at `at`. */
export function countsAfter(window: QuotaWindow, at: number): number {
  if (typeof window === "string") return calendar(window, at).start - 1;
  return at - window.rolling_seconds * 1000 - bucketMs(window.rolling_seconds);
}

/** The window at `at`; a rolling window's end is when its oldest counted bucket leaves it (`oldest`: that bucket's start). */
export function windowAt(window: QuotaWindow, at: number, oldest: number | null = null): WindowSpan {
  if (typeof window === "string") return calendar(window, at);
  const length = window.rolling_seconds * 1000;
  const ms = bucketMs(window.rolling_seconds);
  const start = at - length;
  return { start, end: oldest === null ? at + length : oldest + ms + length };
}

function bucketMs(rollingSeconds: number): number {
  return Math.max(1000, Math.floor((rollingSeconds * 1000) / 60 / 1000) * 1000);
}

function calendar(window: "day" | "month", at: number): WindowSpan {
  const d = new Date(at);
  if (window === "day") {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { start, end: start + 86_400_000 };
  }
  return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}
