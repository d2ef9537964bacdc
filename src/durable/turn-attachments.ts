// A turn's input sent as parts, made into what the queue records: the text (its text parts joined) and a
// reference per file. Files sent inline (base64) or by URL are stored as session files first, under the same
// checks as uploads; a file_id must name a file of this session. Each refusal names the part.

import type { Env } from "../env";
import { ApiError } from "../protocol/errors";
import { type FileRef, type InputPart, inputText } from "../protocol/input-parts";
import { bareMediaType, type FileLimits, fileLimits, tooLarge } from "../runtime/file-rules";
import { parseAllowlist, urlAllowed } from "../runtime/url-allowlist";
import { addFile, type FileStore, fileStore } from "./file-store";

export interface TurnInputs {
  files: FileStore;
  limits: FileLimits;
  urlAllowlist: string[];
  fetch: typeof fetch;
}

/** What a session's turn inputs are checked and stored with. */
export function turnInputs(env: Env, sessionId: string): TurnInputs {
  return {
    files: fileStore(env.BLOBS, sessionId),
    limits: fileLimits(env),
    urlAllowlist: parseAllowlist(env.TOOL_URL_ALLOWLIST),
    fetch: (u, i) => fetch(u, i),
  };
}

function base64Bytes(data: string, path: string): Uint8Array {
  try {
    return Uint8Array.from(atob(data.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
  } catch {
    throw ApiError.validation([{ path, reason: "is not valid base64" }]);
  }
}

async function fetched(url: string, path: string, deps: TurnInputs): Promise<{ bytes: Uint8Array; media_type: string }> {
  if (!urlAllowed(url, deps.urlAllowlist)) throw ApiError.validation([{ path, reason: "is not under TOOL_URL_ALLOWLIST" }]);
  const res = await deps.fetch(url, { redirect: "error" }).catch(() => null);
  if (!res?.ok) throw ApiError.validation([{ path, reason: `could not be fetched (${res ? `HTTP ${res.status}` : "no response"})` }]);
  const declared = Number(res.headers.get("content-length"));
  if (declared > deps.limits.maxFileBytes) throw tooLarge(declared, deps.limits);
  return { bytes: new Uint8Array(await res.arrayBuffer()), media_type: bareMediaType(res.headers.get("content-type")) };
}

async function fileOf(part: Extract<InputPart, { type: "file" }>, path: string, deps: TurnInputs): Promise<FileRef> {
  const filename = part.filename ?? null;
  if (part.file_id !== undefined) {
    const info = await deps.files.head(part.file_id);
    if (!info) throw ApiError.validation([{ path: `${path}.file_id`, reason: "is not a file of this session" }]);
    return { file_id: info.file_id, media_type: info.media_type, filename: filename ?? info.filename, size: info.size };
  }
  const sent = part.data !== undefined ? { bytes: base64Bytes(part.data, `${path}.data`), media_type: "" } : await fetched(part.url!, `${path}.url`, deps);
  const media_type = part.media_type ? bareMediaType(part.media_type) : sent.media_type;
  const info = await addFile(deps.files, { bytes: sent.bytes, media_type, filename }, deps.limits, path);
  return { file_id: info.file_id, media_type: info.media_type, filename: info.filename, size: info.size };
}

/** The input's text and file references (a string input is its own text, with no files). */
export async function turnInput(input: string | InputPart[], deps: TurnInputs): Promise<{ input: string; files?: FileRef[] }> {
  if (typeof input === "string") return { input };
  const files: FileRef[] = [];
  for (const [i, part] of input.entries()) {
    if (part.type === "file") files.push(await fileOf(part, `input[${i}]`, deps));
  }
  return { input: inputText(input), ...(files.length > 0 ? { files } : {}) };
}
