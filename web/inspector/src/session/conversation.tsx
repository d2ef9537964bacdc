// The conversation, turn by turn: the input, what the agent said and did, how the turn ended, and what it
// cost (tokens and money, from cost.recorded, sub-agents included).
import { count, pretty, usd } from "../format";
import { Items } from "./cards";
import { Files } from "./files";
import type { Turn } from "./items";
import type { SessionModel } from "./model";
import { Waterfall } from "./waterfall";

export function Conversation({ model }: { model: SessionModel }) {
  return (
    <section class="conversation" aria-labelledby="conversation-title">
      <h2 id="conversation-title">Conversation</h2>
      {model.turns.length === 0 ? (
        <p class="empty">No turns yet. Send a message to start one.</p>
      ) : (
        <ol class="turns">
          {model.turns.map((turn, i) => (
            <TurnView key={turn.id} turn={turn} n={i + 1} model={model} />
          ))}
        </ol>
      )}
    </section>
  );
}

function TurnView({ turn, n, model }: { turn: Turn; n: number; model: SessionModel }) {
  return (
    <li class={`turn turn-${turn.status}`} data-turn-id={turn.id} data-status={turn.status}>
      <h3 class="turn-head">
        <span>Turn {n}</span> <span class={`badge status-${turn.status}`}>{turn.status}</span>
        {turn.input_tokens + turn.output_tokens > 0 && (
          <span class="meta usage">
            {count(turn.input_tokens)} in · {count(turn.output_tokens)} out tokens · {usd(turn.cost_usd)}
            {turn.cached_input_tokens > 0 && ` · ${Math.round((100 * turn.cached_input_tokens) / turn.input_tokens)}% cache hits`}
          </span>
        )}
      </h3>
      <div class="msg user">
        <span class="who">You</span>
        {turn.input && <p>{turn.input}</p>}
        <Files files={turn.files} label={`Files sent in turn ${n}`} />
      </div>
      <Items items={turn.items} />
      <Waterfall events={model.turnEvents(turn.id)} title={`Waterfall of turn ${n}`} />
      {turn.status === "completed" && turn.output !== null && typeof turn.output !== "string" && (
        <figure class="output">
          <figcaption class="meta">Structured output</figcaption>
          <pre>{pretty(turn.output)}</pre>
        </figure>
      )}
      {turn.status === "completed" && turn.stop_reason && turn.stop_reason !== "final_answer" && <p class="note note-warning">Stopped: {turn.stop_reason}</p>}
      {turn.error && (
        <p class={`note note-${turn.status === "failed" ? "error" : "warning"}`}>{turn.status === "cancelled" ? `Cancelled: ${turn.error}` : turn.error}</p>
      )}
    </li>
  );
}
