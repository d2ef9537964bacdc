// Files a tool returns: a result `{files: [{data (base64), media_type, filename?}, ...], ...}` has each file
// stored as a session file and replaced by its reference, so neither the log nor the model's prompt holds
// the bytes; each stored file is announced by `artifact.created`. A file the session refuses (its type, its
// size) is replaced by the reason, which the model sees.

import { errorMessage } from "../protocol/errors";
import type { EventDraft } from "../protocol/events";
import type { FileRef } from "../protocol/input-parts";
import type { FileBytes } from "./file-parts";

/** Stores a file a tool returned; throws with the reason when the session refuses it. */
export type SaveFile = (file: FileBytes) => Promise<FileRef>;

interface ReturnedFile {
  data: string;
  media_type: string;
  filename?: string;
}

const isReturnedFile = (v: unknown): v is ReturnedFile =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as ReturnedFile).data === "string" &&
  typeof (v as ReturnedFile).media_type === "string" &&
  ((v as ReturnedFile).filename === undefined || typeof (v as ReturnedFile).filename === "string");

function returnedFiles(output: unknown): ReturnedFile[] | null {
  if (typeof output !== "object" || output === null || !Array.isArray((output as { files?: unknown }).files)) return null;
  const files = (output as { files: unknown[] }).files;
  return files.length > 0 && files.every(isReturnedFile) ? files : null;
}

const decode = (data: string) => Uint8Array.from(atob(data.replace(/\s+/g, "")), (c) => c.charCodeAt(0));

/** The output with its returned files stored and replaced by references, and the events that announce them. */
export async function keepToolFiles(
  output: unknown,
  ids: { turn_id: string; step_id?: string; tool_call_id: string },
  save: SaveFile,
): Promise<{ output: unknown; events: EventDraft[] }> {
  const files = returnedFiles(output);
  if (!files) return { output, events: [] };
  const events: EventDraft[] = [];
  const kept = [];
  for (const file of files) {
    try {
      const ref = await save({ bytes: decode(file.data), media_type: file.media_type, filename: file.filename ?? null });
      kept.push(ref);
      events.push({ type: "artifact.created", ...ids, payload: { ...ref, tool_call_id: ids.tool_call_id } });
    } catch (err) {
      kept.push({ error: `the file was not kept: ${errorMessage(err)}`, media_type: file.media_type, filename: file.filename ?? null });
    }
  }
  return { output: { ...(output as object), files: kept }, events };
}
