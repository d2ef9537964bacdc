// Turns waiting behind the running one, with Remove and Promote (to the front).
import type { RuntimeClient } from "../../../../src/client/index";
import { preview } from "../format";
import { ErrorText, Section, useAction } from "../ui";
import type { SessionModel } from "./model";

export function Queue({ client, sid, model }: { client: RuntimeClient; sid: string; model: SessionModel }) {
  const action = useAction();
  return (
    <Section title="Queue" id="queue-title" class="queue">
      {model.queued.length === 0 ? (
        <p class="empty">Nothing queued.</p>
      ) : (
        <ol>
          {model.queued.map((turnId, i) => (
            <li key={turnId} class="queue-item" data-turn-id={turnId}>
              <p id={`queued-${turnId}`}>{preview(model.turn(turnId)?.input ?? turnId, 120)}</p>
              <div class="buttons">
                <button
                  type="button"
                  class="quiet"
                  aria-describedby={`queued-${turnId}`}
                  disabled={action.busy}
                  onClick={() => action.run(() => client.removeQueued(sid, turnId))}
                >
                  Remove
                </button>
                {i > 0 && (
                  <button
                    type="button"
                    class="quiet"
                    aria-describedby={`queued-${turnId}`}
                    disabled={action.busy}
                    onClick={() => action.run(() => client.promoteQueued(sid, turnId))}
                  >
                    Promote
                  </button>
                )}
              </div>
            </li>
          ))}
        </ol>
      )}
      <ErrorText error={action.error} />
    </Section>
  );
}
