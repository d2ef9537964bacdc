// A turn's waterfall as text for the command line: one row per span of the shared fold (views/turn-spans.ts, the
// same spans as the inspector's waterfall and the OTLP export), indented by depth, with a bar placed on the
// turn's time axis (█ working, ░ waiting on a person) and the span's duration.
import type { RuntimeEvent } from "../protocol/events";
import { spanLabel, turnSpans, waitedMs, waterfall } from "../views/turn-spans";
import { indent, oneLine } from "./format";

/** Milliseconds as "850 ms", "1.2 s" or "2 min 5 s". */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The waterfall of a turn's events; `now` ends the spans still open (a running turn). */
export function formatWaterfall(events: readonly RuntimeEvent[], width = 40, now = Date.now()): string {
  const rows = waterfall(turnSpans(events));
  if (rows.length === 0) return "(no spans: the turn's events carry no trace fields)\n";
  const endOf = (end: number, ended: boolean) => (ended ? end : Math.max(end, now));
  const t0 = Math.min(...rows.map((r) => r.span.start));
  const t1 = Math.max(...rows.map((r) => endOf(r.span.end, r.span.ended)));
  const cell = Math.max(1, t1 - t0) / width;
  const labels = rows.map((r) => `${indent(r.depth)}${oneLine(spanLabel(r.span), 36)}`);
  const pad = Math.max(...labels.map((l) => l.length));
  return rows
    .map(({ span }, i) => {
      const end = endOf(span.end, span.ended);
      const first = (t: number) => Math.min(width - 1, Math.floor((t - t0) / cell));
      const last = (from: number, to: number) => Math.min(width - 1, Math.max(first(from), Math.ceil((to - t0) / cell) - 1));
      const bar = Array.from({ length: width }, (_, c) => {
        if (c < first(span.start) || c > last(span.start, end)) return " ";
        return span.waits.some((w) => c >= first(w.start) && c <= last(w.start, w.end ?? now)) ? "░" : "█";
      }).join("");
      const waited = waitedMs(span, now);
      const notes = [
        span.ended ? "" : "running",
        waited > 0 ? `waited ${formatMs(waited)} for a person` : "",
        span.error ? `✗ ${oneLine(span.error, 60)}` : "",
      ];
      const tail = notes.filter(Boolean).join(", ");
      return `${labels[i]!.padEnd(pad)} |${bar}| ${formatMs(end - span.start)}${tail ? ` (${tail})` : ""}`;
    })
    .join("\n")
    .concat("\n");
}
