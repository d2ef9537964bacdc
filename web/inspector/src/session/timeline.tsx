// The raw event log as the page received it: one row per event (sequence, type, ids, the payload in short),
// the whole event on expand, filterable by type. Rows are drawn once: an event never changes.
import { Component } from "preact";
import { useMemo, useState } from "preact/hooks";
import type { RuntimeEvent } from "../../../../src/client/index";
import { count, preview } from "../format";
import { Section } from "../ui";

const ID_FIELDS = ["turn_id", "tool_call_id", "action_id", "subagent_id", "parent_id"] as const;

export function Timeline({ events }: { events: RuntimeEvent[] }) {
  const [type, setType] = useState("");
  const types = useMemo(() => {
    const counts = new Map<string, number>();
    for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
    return [...counts].sort(([a], [b]) => a.localeCompare(b));
  }, [events, events.length]);
  const shown = type ? events.filter((e) => e.type === type) : events;

  return (
    <Section title="Events" id="events-title" class="timeline">
      <div class="timeline-tools">
        <label for="event-filter">Filter by type</label>
        <select id="event-filter" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          <option value="">All types ({count(events.length)})</option>
          {types.map(([t, n]) => (
            <option key={t} value={t}>
              {t} ({count(n)})
            </option>
          ))}
        </select>
        <span class="meta" data-testid="event-count">
          {count(shown.length)} of {count(events.length)} events
        </span>
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to be scrolled */}
      <ol class="events" tabIndex={0} aria-label="Event log">
        {shown.map((e) => (
          <EventRow key={e.sequence} event={e} />
        ))}
      </ol>
    </Section>
  );
}

class EventRow extends Component<{ event: RuntimeEvent }, { open: boolean }> {
  override state = { open: false };

  override shouldComponentUpdate(next: { event: RuntimeEvent }, nextState: { open: boolean }): boolean {
    return next.event !== this.props.event || nextState.open !== this.state.open;
  }

  override render() {
    const e = this.props.event;
    const ids = ID_FIELDS.filter((f) => e[f]).map((f) => `${f.replace(/_id$/, "")} ${e[f]}`);
    return (
      <li data-sequence={e.sequence} data-type={e.type}>
        <details onToggle={(ev) => this.setState({ open: (ev.currentTarget as HTMLDetailsElement).open })}>
          <summary>
            <span class="seq">#{e.sequence}</span> <span class="type">{e.type}</span>
            {ids.length > 0 && <span class="ids">{ids.join(" · ")}</span>}
            <span class="payload">{preview(e.payload, 120)}</span>
          </summary>
          {this.state.open && <pre>{JSON.stringify(e, null, 2)}</pre>}
        </details>
      </li>
    );
  }
}
