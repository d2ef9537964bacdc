// A turn's input sent as parts, made into what the queue records: the text (its text parts joined) and a
// reference per file. Files sent inline (base64) or by URL are stored as session files first, under the same
// checks as uploads; a file_id must name a file of this session; an image needs a model that takes images.
// Each refusal names the part. Also the files a queued turn was submitted with, read back from its log.

import { parseAllowlist, urlAllowed } from "../../engine/url-allowlist";
import type { Env } from "../../env";
import { ApiError } from "../../protocol/errors";
import { type FileRef, type InputPart, inputText } from "../../protocol/input-parts";
import { bareMediaType, type FileLimits, fileLimits, tooLarge } from "../files/file-rules";
import { findFile, type SessionFiles, storeFile } from "../files/file-store";
import type { TurnRow } from "../store/session-store";
import { capabilitiesOf, isImage, parseCapabilityOverrides } from "./model-capabilities";

/** What an input is checked against without its session or the network (checkNewInput, and turnInput first). */
export interface InputChecks {
  urlAllowlist: string[];
  /** The agent's model when it is known to take no images (model-capabilities.ts), else null. */
  textOnlyModel: string | null;
}

export interface TurnInputs extends InputChecks {
  files: SessionFiles;
  bucket: R2Bucket;
  limits: FileLimits;
  fetch: typeof fetch;
}

/** What an input for an agent on `model` is checked against. */
export function inputChecks(env: Pick<Env, "TOOL_URL_ALLOWLIST" | "MODEL_CAPABILITIES">, model: string): InputChecks {
  const takesImages = capabilitiesOf(model, parseCapabilityOverrides(env.MODEL_CAPABILITIES)).images;
  return { textOnlyModel: takesImages ? null : model, urlAllowlist: parseAllowlist(env.TOOL_URL_ALLOWLIST) };
}

/** What a session's turn inputs, for an agent on `model`, are checked and stored with. */
export function turnInputs(env: Env, files: SessionFiles, model: string): TurnInputs {
  return { ...inputChecks(env, model), files, bucket: env.BLOBS, limits: fileLimits(env), fetch: (u, i) => fetch(u, i) };
}

function base64Bytes(data: string, path: string): Uint8Array {
  try {
    return Uint8Array.from(atob(data.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  } catch {
    throw ApiError.validation([{ path, reason: "is not valid base64" }]);
  }
}

function checkAllowed(url: string, path: string, checks: InputChecks): void {
  if (!urlAllowed(url, checks.urlAllowlist)) throw ApiError.validation([{ path, reason: "is not under TOOL_URL_ALLOWLIST" }]);
}

async function fetched(url: string, path: string, deps: TurnInputs): Promise<{ bytes: Uint8Array; media_type: string }> {
  checkAllowed(url, path, deps);
  const cannot = (why: string) => ApiError.validation([{ path, reason: `could not be fetched (${why})` }]);
  // Redirects are not followed: the allowlist vouches for this URL only. ("manual": workerd has no "error".)
  const res = await deps.fetch(url, { redirect: "manual" }).catch((err: unknown) => {
    throw cannot(err instanceof Error ? err.message : String(err));
  });
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel();
    throw cannot(`HTTP ${res.status}, a redirect${res.headers.get("location") ? ` to ${res.headers.get("location")}` : ""}: redirects are not followed`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw cannot(`HTTP ${res.status}`);
  }
  const declared = Number(res.headers.get("content-length"));
  if (declared > deps.limits.maxFileBytes) throw tooLarge(declared, deps.limits);
  return { bytes: new Uint8Array(await res.arrayBuffer()), media_type: bareMediaType(res.headers.get("content-type")) };
}

/** A file part made ready to store: a file of the session already, or bytes sent inline or fetched. */
type Resolved = { ref: FileRef } | { bytes: Uint8Array; media_type: string; filename: string | null };

async function resolved(part: Extract<InputPart, { type: "file" }>, path: string, deps: TurnInputs): Promise<Resolved> {
  const filename = part.filename ?? null;
  if (part.file_id !== undefined) {
    const info = await findFile(deps.files, part.file_id);
    if (!info) throw ApiError.validation([{ path: `${path}.file_id`, reason: "is not a file of this session" }]);
    return { ref: { file_id: info.file_id, media_type: info.media_type, filename: filename ?? info.filename, size: info.size } };
  }
  const sent = part.data !== undefined ? { bytes: base64Bytes(part.data, `${path}.data`), media_type: "" } : await fetched(part.url!, `${path}.url`, deps);
  return { bytes: sent.bytes, media_type: part.media_type ? bareMediaType(part.media_type) : sent.media_type, filename };
}

/** Refuses an image for a model known to take none (model-capabilities.ts). */
function checkModelTakes(mediaType: string, path: string, checks: InputChecks): void {
  if (checks.textOnlyModel && isImage(mediaType)) {
    throw ApiError.validation([{ path, reason: `is an image (${mediaType}), and the agent's model "${checks.textOnlyModel}" takes no images` }]);
  }
}

/** Blanks alone say nothing: the model would answer an empty message (every surface's input comes here). */
function checkNotBlank(input: string | InputPart[]): void {
  if (inputText(input).trim() === "" && (typeof input === "string" || !input.some((p) => p.type === "file"))) {
    throw ApiError.validation([{ path: "input", reason: "must have some text or a file" }]);
  }
}

/**
 * The checks of a new session's first input that need neither the session nor the network, run before the
 * session is created so that these refusals open nothing (a surface that opens a session for its first message
 * erases it when a later check refuses): blanks, a file_id (a new session has no files), base64, the URL allowlist
 * and an image declared for a model that takes none. What only a fetch tells is checked by turnInput.
 */
export function checkNewInput(input: string | InputPart[], checks: InputChecks): void {
  checkNotBlank(input);
  if (typeof input === "string") return;
  for (const [i, part] of input.entries()) {
    if (part.type !== "file") continue;
    const path = `input[${i}]`;
    if (part.file_id !== undefined) throw ApiError.validation([{ path: `${path}.file_id`, reason: "is not a file of this session" }]);
    if (part.data !== undefined) base64Bytes(part.data, `${path}.data`);
    else checkAllowed(part.url!, `${path}.url`, checks);
    if (part.media_type) checkModelTakes(bareMediaType(part.media_type), path, checks);
  }
}

/**
 * The input's text and file references (a string input is its own text, with no files). Every part is checked
 * before any is stored, so a refused input leaves no file behind for its model's sake.
 */
export async function turnInput(input: string | InputPart[], deps: TurnInputs): Promise<{ input: string; files?: FileRef[] }> {
  checkNotBlank(input);
  if (typeof input === "string") return { input };
  const pending: [Resolved, string][] = [];
  for (const [i, part] of input.entries()) {
    if (part.type === "file") {
      const file = await resolved(part, `input[${i}]`, deps);
      checkModelTakes("ref" in file ? file.ref.media_type : file.media_type, `input[${i}]`, deps);
      pending.push([file, `input[${i}]`]);
    }
  }
  const files: FileRef[] = [];
  for (const [file, path] of pending) {
    if ("ref" in file) files.push(file.ref);
    else {
      const info = await storeFile(deps.files, deps.bucket, file, deps.limits, path);
      files.push({ file_id: info.file_id, media_type: info.media_type, filename: info.filename, size: info.size });
    }
  }
  return { input: inputText(input), ...(files.length > 0 ? { files } : {}) };
}

/**
 * Forgets the files `turnInput` stored for `input` (those it did not name by file_id), rows and bytes: the turn
 * they came with was refused as it was placed, so nothing it brought stays.
 */
export async function forgetStored(input: string | InputPart[], files: FileRef[] | undefined, deps: TurnInputs): Promise<void> {
  const named = new Set(typeof input === "string" ? [] : input.flatMap((p) => (p.type === "file" && p.file_id !== undefined ? [p.file_id] : [])));
  for (const f of files ?? []) {
    if (named.has(f.file_id)) continue;
    const removed = await deps.files.remove(f.file_id);
    if (removed?.key) await deps.bucket.delete(removed.key);
  }
}

/** The files a turn was submitted with (the references its row keeps). */
export function submittedFiles(turn: Pick<TurnRow, "files">): FileRef[] | undefined {
  return turn.files ? (JSON.parse(turn.files) as FileRef[]) : undefined;
}
