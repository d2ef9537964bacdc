// The message form: text, files picked with Attach (shown as thumbnails until sent, each removable), Send and
// Stop. Files become useChat's FileUIPart[] (data URLs) as soon as they are picked, so the thumbnails and the
// sent message show the same parts.
import { convertFileListToFileUIParts, type FileUIPart } from "ai";
import { type FormEvent, useRef, useState } from "react";
import { FileView } from "./FileView";

export function Composer({ busy, onSend, onStop }: { busy: boolean; onSend: (text: string, files: FileUIPart[]) => void; onStop: () => void }) {
  const [input, setInput] = useState("");
  const [files, setFiles] = useState<FileUIPart[]>([]);
  const picker = useRef<HTMLInputElement>(null);

  const pick = async (list: FileList | null) => {
    const parts = await convertFileListToFileUIParts(list ?? undefined);
    setFiles((current) => [...current, ...parts]);
    if (picker.current) picker.current.value = ""; // picking the same file again is a change too
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!input.trim() && files.length === 0) return;
    onSend(input, files);
    setInput("");
    setFiles([]);
  };

  return (
    <form onSubmit={submit}>
      {files.length > 0 && (
        <div className="attachments">
          {files.map((file, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the same file may be attached twice, so its place is its identity
            <div key={i} className="attachment">
              <FileView part={file} src={file.url} />
              <button type="button" aria-label={`Remove ${file.filename ?? "file"}`} onClick={() => setFiles(files.filter((_, j) => j !== i))}>
                ×
              </button>
            </div>
          ))}
        </div>
      )}
      <div className="row">
        <button type="button" onClick={() => picker.current?.click()}>
          Attach
        </button>
        <input ref={picker} type="file" accept="image/*,application/pdf" multiple hidden onChange={(e) => void pick(e.target.files)} />
        <input value={input} onChange={(e) => setInput(e.target.value)} placeholder="Try: what is 2 * (3 + 4)?" />
        <button type="submit" disabled={busy}>
          Send
        </button>
        {/* stop() would only disconnect (the stream is resumable): interrupt cancels the turn itself. */}
        <button type="button" disabled={!busy} onClick={onStop}>
          Stop
        </button>
      </div>
    </form>
  );
}
