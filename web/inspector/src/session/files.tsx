// A turn's files: the input's attachments and the files tools returned. Images show inline as thumbnails,
// other files (and SVG, which the runtime serves as an attachment) as download buttons. The bytes come from
// the files route with the inspector's key in a header (never in a URL) and are shown from a blob: URL,
// which the page's CSP allows for images.
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import type { RuntimeClient } from "../../../../src/client/index";
import { bytes, describeError } from "../format";
import type { FileRef } from "./items";

/** Where the session's files are read from (given by the session page). */
export const FileSource = createContext<{ client: RuntimeClient; sid: string } | null>(null);

const inline = (f: FileRef) => f.media_type.startsWith("image/") && f.media_type !== "image/svg+xml";

export function Files({ files, label }: { files: FileRef[]; label: string }) {
  if (files.length === 0) return null;
  return (
    <ul class="files" aria-label={label}>
      {files.map((f) => (
        <li key={f.file_id} data-file-id={f.file_id} data-media-type={f.media_type}>
          {inline(f) ? <Thumbnail file={f} /> : <Download file={f} />}
        </li>
      ))}
    </ul>
  );
}

const nameOf = (f: FileRef) => f.filename ?? f.file_id;

async function blobOf(source: { client: RuntimeClient; sid: string }, f: FileRef): Promise<Blob> {
  const { bytes, contentType } = await source.client.downloadFile(source.sid, f.file_id);
  return new Blob([bytes as Uint8Array<ArrayBuffer>], { type: contentType });
}

function Thumbnail({ file }: { file: FileRef }) {
  const source = useContext(FileSource);
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!source) return;
    let created: string | null = null;
    let gone = false;
    blobOf(source, file).then(
      (blob) => {
        if (gone) return;
        created = URL.createObjectURL(blob);
        setUrl(created);
      },
      (err) => !gone && setError(describeError(err)),
    );
    return () => {
      gone = true;
      if (created) URL.revokeObjectURL(created);
    };
  }, [source, file.file_id]);
  return (
    <figure class="thumbnail">
      {url ? <img src={url} alt={nameOf(file)} /> : <span class="placeholder">{error ?? "Loading…"}</span>}
      <figcaption class="meta">
        {nameOf(file)} · {bytes(file.size)}
      </figcaption>
    </figure>
  );
}

function Download({ file }: { file: FileRef }) {
  const source = useContext(FileSource);
  const [error, setError] = useState<string | null>(null);
  const save = async () => {
    if (!source) return;
    try {
      const url = URL.createObjectURL(await blobOf(source, file));
      const a = Object.assign(document.createElement("a"), { href: url, download: nameOf(file) });
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setError(null);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return (
    <>
      <button type="button" class="file-link" onClick={save}>
        {nameOf(file)}
      </button>{" "}
      <span class="meta">
        {file.media_type} · {bytes(file.size)}
      </span>
      {error && (
        <span class="error" role="alert">
          {" "}
          {error}
        </span>
      )}
    </>
  );
}
