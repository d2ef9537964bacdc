// A turn's waterfall: one row per span of the shared fold (src/views/turn-spans.ts, the spans the
// OTLP export sends and `agent-runtime timeline` prints): the turn, its model calls, tool calls (parallel
// ones overlap on the time axis) and sub-agents, indented by depth, each bar placed on the turn's time axis,
// with the waits on a person (approvals, questions) shaded inside their call. Open spans run until now. A
// code-mode script's inner calls are drawn under its `run_code` call, one level deeper.
import { useMemo } from "preact/hooks";
import { type RuntimeEvent, spanLabel, type TurnSpan, turnSpans, waitedMs, waterfall } from "../../../../src/client/index";
import { duration } from "../format";
import { useNow } from "./approvals";

/**
 * A script's inner calls name its `run_code` call as their parent_id, but their trace parent is the turn (as
 * the OTLP export sends them): here each is moved under the script's span.
 */
function nestScripts(spans: TurnSpan[]): TurnSpan[] {
  const scripts = new Map(spans.flatMap((s) => (s.call?.name === "run_code" ? [[s.call.id, s.span_id] as const] : [])));
  return spans.map((s) => {
    const script = s.call?.parent_id ? scripts.get(s.call.parent_id) : undefined;
    return script && script !== s.span_id ? { ...s, parent: script } : s;
  });
}

const pct = (n: number) => `${Math.max(0, Math.min(100, n * 100)).toFixed(3)}%`;

export function Waterfall({ events, title }: { events: readonly RuntimeEvent[]; title: string }) {
  // The array grows in place: its length says when the spans changed.
  const rows = useMemo(() => waterfall(nestScripts(turnSpans(events))), [events, events.length]);
  // Open spans (a running turn, a wait on a person) grow while nothing else happens.
  const now = useNow(rows.some((r) => !r.span.ended));
  if (rows.length === 0) return null;
  const endOf = (s: TurnSpan) => (s.ended ? s.end : Math.max(s.end, now));
  const t0 = Math.min(...rows.map((r) => r.span.start));
  const total = Math.max(1, Math.max(...rows.map((r) => endOf(r.span))) - t0);
  return (
    <details class="waterfall" open>
      <summary>
        Timeline · {rows.length} spans · {duration(total)}
      </summary>
      <ol aria-label={title}>
        {rows.map(({ span, depth }) => {
          const end = endOf(span);
          const waited = waitedMs(span, now);
          const waitWord = span.waits.some((w) => w.kind === "user_input") ? "an answer" : "approval";
          return (
            <li
              key={span.span_id}
              class={`span span-${span.kind}${span.error ? " span-error" : ""}${span.ended ? "" : " span-open"}`}
              data-kind={span.kind}
              data-depth={depth}
            >
              <span class="span-label" title={spanLabel(span)} style={{ paddingInlineStart: `${depth * 0.9}rem` }}>
                {spanLabel(span)}
              </span>
              <span class="track" aria-hidden="true">
                <span class="bar" style={{ left: pct((span.start - t0) / total), width: pct((end - span.start) / total) }}>
                  {span.waits.map((w) => (
                    <span
                      key={w.start}
                      class="wait"
                      style={{
                        left: pct((w.start - span.start) / Math.max(1, end - span.start)),
                        width: pct(((w.end ?? now) - w.start) / Math.max(1, end - span.start)),
                      }}
                    />
                  ))}
                </span>
              </span>
              <span class="span-time">
                <span class="offset">+{duration(span.start - t0)}</span> <span class="took">{duration(end - span.start)}</span>
                {!span.ended && " running"}
                {waited > 0 && (
                  <span class="waited">
                    {" "}
                    · waited {duration(waited)} for {waitWord}
                  </span>
                )}
                {span.error && <span class="span-failed"> · ✗ {span.error}</span>}
              </span>
            </li>
          );
        })}
      </ol>
    </details>
  );
}
