// What a session accepts as a file: its size (alone and with the session's other files), its media type
// (an allowlist), its name, and bytes that look like the type they claim. Every refusal is an ApiError
// naming the limit, raised before anything is stored.
import { positiveSetting } from "../../env";
import { ApiError } from "../../protocol/errors";

export const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;
export const DEFAULT_MAX_SESSION_FILE_BYTES = 100 * 1024 * 1024;
export const DEFAULT_MAX_SESSION_FILES = 1000;
export const DEFAULT_MEDIA_TYPES = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/svg+xml",
  "application/pdf",
  "text/plain",
  "text/markdown",
  "text/csv",
  "application/json",
];

export interface FileLimits {
  maxFileBytes: number;
  maxSessionBytes: number;
  maxSessionFiles: number;
  mediaTypes: string[];
}

export interface FileSettings {
  FILES_MAX_BYTES?: string;
  FILES_MAX_SESSION_BYTES?: string;
  FILES_MAX_SESSION_FILES?: string;
  FILES_MEDIA_TYPES?: string;
}

export function fileLimits(env: FileSettings): FileLimits {
  const listed = (env.FILES_MEDIA_TYPES ?? "")
    .split(",")
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
  return {
    maxFileBytes: positiveSetting(env.FILES_MAX_BYTES, DEFAULT_MAX_FILE_BYTES),
    maxSessionBytes: positiveSetting(env.FILES_MAX_SESSION_BYTES, DEFAULT_MAX_SESSION_FILE_BYTES),
    maxSessionFiles: positiveSetting(env.FILES_MAX_SESSION_FILES, DEFAULT_MAX_SESSION_FILES),
    mediaTypes: listed.length > 0 ? listed : DEFAULT_MEDIA_TYPES,
  };
}

/** The bare media type of a Content-Type (parameters such as charset dropped), lower case. */
export const bareMediaType = (contentType: string | null | undefined): string => (contentType ?? "").split(";")[0]!.trim().toLowerCase();

export function tooLarge(size: number, limits: FileLimits): ApiError {
  return new ApiError("body_too_large", `The file is ${size} bytes, over the limit of ${limits.maxFileBytes} bytes a file (FILES_MAX_BYTES)`);
}

/** The media type a file may be stored as (415 when it is not on the allowlist). */
export function checkMediaType(mediaType: string, limits: FileLimits, path = "content-type"): void {
  if (!mediaType) throw ApiError.validation([{ path, reason: "is required: the file's media type" }]);
  if (!limits.mediaTypes.includes(mediaType)) {
    throw new ApiError("unsupported_media_type", `${path} ${mediaType} is not accepted (FILES_MEDIA_TYPES allows ${limits.mediaTypes.join(", ")})`);
  }
}

// The first bytes of the binary types, so a file cannot claim to be an image it is not.
const SIGNATURES: Record<string, (b: Uint8Array) => boolean> = {
  "image/png": (b) => [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((x, i) => b[i] === x),
  "image/jpeg": (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  "image/gif": (b) => String.fromCharCode(...b.slice(0, 4)) === "GIF8",
  "image/webp": (b) => String.fromCharCode(...b.slice(0, 4)) === "RIFF" && String.fromCharCode(...b.slice(8, 12)) === "WEBP",
  "application/pdf": (b) => String.fromCharCode(...b.slice(0, 5)) === "%PDF-",
};

/** Checks a file's bytes and name against the limits (the session's total checked by the caller, who knows it). */
export function checkFile(bytes: Uint8Array, mediaType: string, filename: string | null, limits: FileLimits, path = "body"): void {
  checkMediaType(mediaType, limits, path === "body" ? "content-type" : `${path}.media_type`);
  if (bytes.byteLength > limits.maxFileBytes) throw tooLarge(bytes.byteLength, limits);
  if (bytes.byteLength === 0) throw ApiError.validation([{ path, reason: "is empty: a file needs at least one byte" }]);
  const signature = SIGNATURES[mediaType];
  if (signature && !signature(bytes)) throw ApiError.validation([{ path, reason: `does not look like ${mediaType} (its first bytes do not match)` }]);
  if (filename !== null) checkFilename(filename, path === "body" ? "filename" : `${path}.filename`);
}

// Control characters (C0, DEL, C1), bidirectional overrides and isolates (a name that reads "txt.exe" backwards
// shows as something else) and slashes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const UNSAFE_NAME = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069/\\]/;

export function checkFilename(filename: string, path: string): void {
  if (filename.length === 0 || filename.length > 255 || UNSAFE_NAME.test(filename)) {
    throw ApiError.validation([{ path, reason: "must be 1-255 characters without control or bidirectional formatting characters or slashes" }]);
  }
}

/** Refuses a file that would take the session's files over their byte limit (413) or their count limit (409). */
export function checkSessionQuota(stored: { bytes: number; count: number }, adding: number, limits: FileLimits): void {
  if (stored.bytes + adding > limits.maxSessionBytes) {
    throw new ApiError(
      "body_too_large",
      `The session's files would take ${stored.bytes + adding} bytes, over the limit of ${limits.maxSessionBytes} bytes a session (FILES_MAX_SESSION_BYTES)`,
    );
  }
  if (stored.count >= limits.maxSessionFiles) {
    throw new ApiError("conflict", `The session has ${stored.count} files, its limit (FILES_MAX_SESSION_FILES); delete one to add another`);
  }
}
