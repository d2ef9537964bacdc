// The message box: Send starts a turn when the session is idle and adds the message to the running turn
// otherwise; while a turn runs the message can also be queued as the next turn, or run now in place of the
// running turn (on_busy "interrupt"), or the turn interrupted.
import { useState } from "preact/hooks";
import type { RuntimeClient } from "../../../../src/client/index";
import { ErrorText, useAction } from "../ui";

export function Composer({ client, sid, running, onDone }: { client: RuntimeClient; sid: string; running: boolean; onDone(): void }) {
  const [text, setText] = useState("");
  const action = useAction();
  const send = async (how: "send" | "queue" | "now") => {
    const input = text.trim();
    if (!input || action.busy) return;
    const ok = await action.run(() => {
      if (how === "now") return client.submitTurn(sid, { input, on_busy: "interrupt" });
      return how === "queue" || !running ? client.submitTurn(sid, input) : client.injectMessage(sid, input);
    });
    if (ok) setText("");
    onDone();
  };
  const interrupt = () => action.run(() => client.interrupt(sid, "interrupted from the inspector")).then(onDone);

  return (
    <form
      class="composer panel"
      aria-label="Message"
      onSubmit={(e) => {
        e.preventDefault();
        void send("send");
      }}
    >
      <label for="composer-input">{running ? "Message to the running turn" : "New turn"}</label>
      <textarea
        id="composer-input"
        rows={3}
        value={text}
        aria-describedby="composer-hint"
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            void send("send");
          }
        }}
      />
      <p id="composer-hint" class="hint">
        {running ? "Send adds the message to the running turn; Run this now replaces the turn." : "Send starts a turn."} Ctrl+Enter sends.
      </p>
      <div class="buttons">
        <button type="submit" disabled={action.busy || !text.trim()}>
          Send
        </button>
        {running && (
          <button type="button" class="quiet" disabled={action.busy || !text.trim()} onClick={() => send("queue")}>
            Queue as next turn
          </button>
        )}
        {running && (
          <button
            type="button"
            class="quiet"
            title="Cancels the running turn (its partial answer stays) and runs this message next"
            disabled={action.busy || !text.trim()}
            onClick={() => send("now")}
          >
            Run this now
          </button>
        )}
        <button type="button" class="danger" disabled={!running || action.busy} onClick={interrupt}>
          Interrupt
        </button>
      </div>
      <ErrorText error={action.error} />
    </form>
  );
}
