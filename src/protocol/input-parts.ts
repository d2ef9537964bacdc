// A turn's input as parts: text, and files named by id (uploaded first), sent inline as base64, or by URL.
// The log keeps only references to the files (FileRef); their bytes stay in R2.
import { z } from "zod";

export const FileRef = z
  .object({ file_id: z.string(), media_type: z.string(), filename: z.string().nullable(), size: z.number().int() })
  .meta({ id: "FileRef" });
export type FileRef = z.output<typeof FileRef>;

/** Where a session file is downloaded, relative to the runtime's base URL (a browser adds `?access_token=`). */
export const fileRoute = (sessionId: string, fileId: string): string => `/v1/sessions/${sessionId}/files/${fileId}`;

/** A session file's absolute URL under `origin` (the runtime's, as the request that reads it reached it). */
export const fileUrl = (origin: string, sessionId: string, fileId: string): string => `${origin}${fileRoute(sessionId, fileId)}`;

const TextPart = z.strictObject({ type: z.literal("text"), text: z.string().max(200_000, "must be at most 200000 characters") });

const FilePart = z
  .strictObject({
    type: z.literal("file"),
    file_id: z.string().optional().describe("a file of the session (POST /v1/sessions/:sid/files)"),
    data: z.string().optional().describe("the bytes, base64 (stored as a session file, within the request's 1 MiB)"),
    url: z.url().optional().describe("fetched and stored as a session file; only under TOOL_URL_ALLOWLIST"),
    media_type: z.string().optional().describe("required with data; with url, the response's type is used when absent"),
    filename: z.string().optional(),
  })
  .refine((p) => [p.file_id, p.data, p.url].filter((v) => v !== undefined).length === 1, "needs exactly one of file_id, data and url")
  .refine((p) => p.data === undefined || p.media_type !== undefined, { message: "is required with data", path: ["media_type"] });

export const InputPart = z.union([TextPart, FilePart]);
export type InputPart = z.infer<typeof InputPart>;

export const InputParts = z
  .array(InputPart)
  .min(1, "must not be empty")
  .max(20, "must have at most 20 parts")
  .refine((parts) => parts.some((p) => p.type === "text" && p.text.trim() !== "") || parts.some((p) => p.type === "file"), "must have some text or a file")
  .meta({ id: "InputParts" });

/** The text of a turn's input: a string is its own text; parts give their text parts, joined. */
export function inputText(input: string | InputPart[]): string {
  if (typeof input === "string") return input;
  return input.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n\n");
}
