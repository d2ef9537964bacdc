// A message's file part, in the composer before sending and in the conversation after: an image as a
// thumbnail, any other file (a PDF) by its name, a link once the runtime holds it.
import type { FileUIPart } from "ai";

export function FileView({ part, src }: { part: FileUIPart; src: string }) {
  const name = part.filename ?? part.mediaType;
  if (part.mediaType.startsWith("image/")) return <img className="thumb" src={src} alt={name} title={name} />;
  // Browsers refuse to open a data: URL in a tab, so a file not sent yet is only named.
  if (src.startsWith("data:")) return <span className="file">{name}</span>;
  return (
    <a className="file" href={src} target="_blank" rel="noreferrer">
      {name}
    </a>
  );
}
