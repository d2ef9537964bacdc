// Files in the conversation: a turn's user message holds references to session files (in the checkpoint and
// the history, so neither SQLite nor the log holds their bytes); each model call reads the bytes and hands
// them to the provider as the AI SDK's file parts (images as images, PDFs as documents). Text-like files go
// as text with their name, as a provider that takes no such file would refuse it. A workspace_read of an
// image or PDF (tools/session-files.ts) hands the model the file the same way: tool results carry only text
// with most providers, so the file follows the step's results as a user message of file references.
import type { FilePart, ModelMessage, TextPart, ToolContent, UserContent } from "ai";
import type { FileRef } from "../protocol/input-parts";

/** How a reference is written in a file part's `data`; no base64 or URL starts so. */
const REF = "runtime-file:";

export interface FileBytes {
  bytes: Uint8Array;
  media_type: string;
  filename: string | null;
}

/** Reads a session file's bytes; null when it is gone (deleted, or the session erased). */
export type ReadFile = (fileId: string) => Promise<FileBytes | null>;

/** Rewrites a text file's text before the model or a guardrail reads it (the input stage's redactions). */
export type TextFilter = (text: string) => string;

const unchanged: TextFilter = (text) => text;

/** The user message of an input with files: its text, then a reference part per file. */
export function userMessage(input: string, files: readonly FileRef[] | undefined): ModelMessage {
  if (!files || files.length === 0) return { role: "user", content: input };
  const refs: FilePart[] = files.map((f) => ({
    type: "file",
    data: `${REF}${f.file_id}`,
    mediaType: f.media_type,
    ...(f.filename ? { filename: f.filename } : {}),
  }));
  return { role: "user", content: [...(input ? [{ type: "text" as const, text: input }] : []), ...refs] };
}

/** The text of a user message, whether a string or parts (its files left out). */
export function userText(m: ModelMessage | undefined): string {
  if (m?.role !== "user") return "";
  if (typeof m.content === "string") return m.content;
  return m.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n");
}

/** The user message with `text` added to its text (its files kept). */
export function appendText(m: ModelMessage, text: string): ModelMessage {
  if (m.role !== "user" || typeof m.content === "string") return { role: "user", content: `${userText(m)}${text}` };
  return { role: "user", content: [...m.content, { type: "text", text }] };
}

const refOf = (part: UserContent[number]): string | null =>
  typeof part === "object" && part.type === "file" && typeof part.data === "string" && part.data.startsWith(REF) ? part.data.slice(REF.length) : null;

const TEXT_LIKE = /^(text\/|application\/json$)/;

/** A media type given to the model as text rather than as a file. */
export const isTextLike = (mediaType: string): boolean => TEXT_LIKE.test(mediaType);

/** The result of a workspace_read of a file the model receives as a file part after the step's results. */
export interface AttachedFile {
  attached_file: FileRef;
  note: string;
}

const ATTACHING_TOOL = "workspace_read";

export const attachedFile = (ref: FileRef): AttachedFile => ({
  attached_file: ref,
  note: "The file's content follows the tool results as a file in a user message.",
});

function attachedRefs(m: ModelMessage): FileRef[] {
  if (m.role !== "tool") return [];
  return (m.content as ToolContent).flatMap((p) => {
    if (p.type !== "tool-result" || p.toolName !== ATTACHING_TOOL || p.output.type !== "json") return [];
    const ref = (p.output.value as Partial<AttachedFile> | null)?.attached_file;
    return ref && typeof ref.file_id === "string" ? [ref] : [];
  });
}

async function resolvedPart(part: FilePart, fileId: string, read: ReadFile, filter: TextFilter): Promise<FilePart | TextPart> {
  const name = part.filename ?? fileId;
  const file = await read(fileId);
  if (!file) return { type: "text", text: `[file ${name} (${part.mediaType}) is no longer available]` };
  if (isTextLike(file.media_type)) return { type: "text", text: `[file ${name} (${file.media_type})]\n${filter(new TextDecoder().decode(file.bytes))}` };
  return { type: "file", data: file.bytes, mediaType: file.media_type, ...(part.filename ? { filename: part.filename } : {}) };
}

/** A user message's content with its file references replaced by the files (text files as their text). */
async function resolvedContent(m: ModelMessage, read: ReadFile, filter: TextFilter): Promise<Exclude<UserContent, string>> {
  const content = m.content as Exclude<UserContent, string>;
  return Promise.all(content.map((p) => (refOf(p) ? resolvedPart(p as FilePart, refOf(p)!, read, filter) : p)));
}

/**
 * The text the model reads in a user message: its text parts and the text of its text files, as the model
 * receives them. Images, PDFs and other files are not text the runtime reads.
 */
export async function readableText(m: ModelMessage | undefined, read: ReadFile, filter: TextFilter = unchanged): Promise<string> {
  if (!m || !hasRefs(m)) return userText(m);
  const parts = await resolvedContent(m, read, filter);
  return parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n");
}

/**
 * The messages with their file references replaced by the files, and the files tools read given after their
 * results; `filter` rewrites the text of text files. A message with none is returned as it is, and each
 * resolved one is kept (by identity) in `cache` (a tool message's entry is the message of its files), so later
 * steps of the turn reuse it and the model stream's per-message conversion (model-stream.ts) still finds it.
 */
export async function withFiles(
  messages: ModelMessage[],
  read: ReadFile,
  cache: WeakMap<ModelMessage, ModelMessage>,
  filter: TextFilter = unchanged,
): Promise<ModelMessage[]> {
  if (!messages.some((m) => hasRefs(m) || attachedRefs(m).length > 0)) return messages;
  const resolvedOnce = async (m: ModelMessage, withRefs: () => ModelMessage): Promise<ModelMessage> => {
    let resolved = cache.get(m);
    if (!resolved) {
      resolved = { role: "user", content: await resolvedContent(withRefs(), read, filter) };
      cache.set(m, resolved);
    }
    return resolved;
  };
  const out: ModelMessage[] = [];
  // A step's results may span consecutive tool messages (model-stream.ts joins them): the files follow them all.
  const files: ModelMessage[] = [];
  for (const m of messages) {
    if (m.role !== "tool") out.push(...files.splice(0));
    const attached = attachedRefs(m);
    out.push(hasRefs(m) ? await resolvedOnce(m, () => m) : m);
    if (attached.length > 0) files.push(await resolvedOnce(m, () => userMessage("[files read by workspace_read]", attached)));
  }
  return [...out, ...files];
}

function hasRefs(m: ModelMessage): boolean {
  return m.role === "user" && Array.isArray(m.content) && m.content.some((p) => refOf(p) !== null);
}
