// The message box: Send starts a turn when the session is idle and adds the message to the running turn
// otherwise; while a turn runs the message can also be queued as the next turn, or run now in place of the
// running turn (on_busy "interrupt"), or the turn interrupted. Attached files are uploaded first and sent as
// file parts, with the message whichever way it goes (on_busy "inject" carries them into the running turn).
import { useState } from "preact/hooks";
import type { RuntimeClient, SubmitTurnRequest } from "../../../../src/client/index";
import { bytes } from "../format";
import { ErrorText, useAction } from "../ui";

/** Uploads the files and answers the turn's input as parts: the text (if any), then a file part per upload. */
async function uploadParts(client: RuntimeClient, sid: string, text: string, files: File[]): Promise<SubmitTurnRequest["input"]> {
  const uploaded = [];
  for (const f of files) uploaded.push(await client.uploadFile(sid, f, { mediaType: f.type || "application/octet-stream", filename: f.name }));
  const textPart = text ? [{ type: "text" as const, text }] : [];
  return [...textPart, ...uploaded.map((u) => ({ type: "file" as const, file_id: u.file_id, media_type: u.media_type }))];
}

export function Composer({ client, sid, running, onDone }: { client: RuntimeClient; sid: string; running: boolean; onDone(): void }) {
  const [text, setText] = useState("");
  const [attached, setAttached] = useState<File[]>([]);
  const action = useAction();
  const ready = text.trim() !== "" || attached.length > 0;
  const send = async (how: "send" | "queue" | "now") => {
    const input = text.trim();
    if (!ready || action.busy) return;
    const files = attached;
    const ok = await action.run(async () => {
      const parts = files.length > 0 ? await uploadParts(client, sid, input, files) : null;
      // Said explicitly while a turn runs: the agent's own default (`on_busy`) may be another strategy.
      const on_busy = how === "now" ? "interrupt" : !running ? null : how === "queue" ? "enqueue" : "inject";
      return client.submitTurn(sid, { input: parts ?? input, ...(on_busy ? { on_busy } : {}) });
    });
    if (ok) {
      // Only what was sent: what the user typed or attached while it was being sent stays.
      setText((now) => (now.trim() === input ? "" : now));
      setAttached((now) => now.filter((f) => !files.includes(f)));
    }
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
      <label for="composer-files" class="attach">
        Attach files
      </label>
      <input
        id="composer-files"
        type="file"
        multiple
        onChange={(e) => {
          setAttached([...attached, ...(e.currentTarget.files ?? [])]);
          e.currentTarget.value = "";
        }}
      />
      {attached.length > 0 && (
        <ul class="attached" aria-label="Attached files">
          {attached.map((f, i) => (
            <li key={`${f.name}-${i}`}>
              {f.name} <span class="meta">{bytes(f.size)}</span>{" "}
              <button type="button" class="quiet" aria-label={`Remove ${f.name}`} onClick={() => setAttached(attached.filter((_, j) => j !== i))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <p id="composer-hint" class="hint">
        {running ? "Send adds the message to the running turn; Run this now replaces the turn." : "Send starts a turn."} Ctrl+Enter sends.
      </p>
      <div class="buttons">
        <button type="submit" disabled={action.busy || !ready}>
          Send
        </button>
        {running && (
          <button type="button" class="quiet" disabled={action.busy || !ready} onClick={() => send("queue")}>
            Queue as next turn
          </button>
        )}
        {running && (
          <button
            type="button"
            class="quiet"
            title="Cancels the running turn (its partial answer stays) and runs this message next"
            disabled={action.busy || !ready}
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
