// A session's files (uploads, attachments, files tools return), stored in R2: upload, list, download, delete.
// The upload's body is the file's raw bytes, so its route is written by hand (src/routes/files.ts).
import { z } from "zod";
import { json, operation, Sid, sidWith } from "./operation";

export const FileInfo = z
  .object({
    file_id: z.string(),
    media_type: z.string(),
    size: z.number().int().describe("bytes"),
    sha256: z.string().describe("hex digest of the bytes"),
    filename: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: "FileInfo" });
export type FileInfo = z.output<typeof FileInfo>;

const SidFile = sidWith("file_id");

export const uploadFile = operation({
  method: "post",
  path: "/v1/sessions/{sid}/files",
  operationId: "uploadFile",
  summary:
    "Upload a file: the body is its raw bytes, sent with their Content-Type (on the FILES_MEDIA_TYPES allowlist), or a multipart/form-data form whose one `file` field is the file (its type and name from the form), at most FILES_MAX_BYTES (default 20 MiB) a file, FILES_MAX_SESSION_BYTES (default 100 MiB) and FILES_MAX_SESSION_FILES (default 1000 files, 409 past it) a session",
  permission: "session.submit",
  rateLimit: "request",
  params: Sid,
  query: z.object({ filename: z.string().optional().meta({ description: "The file's name (1-255 characters, no slashes)" }) }),
  responses: { 201: json(FileInfo, "Stored") },
  errors: [404, 409, 413, 415, 422],
  custom: true,
});

export const listFiles = operation({
  method: "get",
  path: "/v1/sessions/{sid}/files",
  operationId: "listFiles",
  summary: "A page of the session's files, oldest first: limit 1-1000 (default 100); cursor from next_cursor",
  permission: "session.read",
  rateLimit: "request",
  params: Sid,
  query: z.object({ limit: z.string().optional(), cursor: z.string().optional() }),
  responses: {
    200: json(
      z.object({
        files: z.array(FileInfo),
        next_cursor: z.string().nullable().describe("pass as `cursor` for the next page; null on the last page"),
      }),
      "A page of files",
    ),
  },
  errors: [404, 422],
  custom: true,
});

export const getFile = operation({
  method: "get",
  path: "/v1/sessions/{sid}/files/{file_id}",
  operationId: "getFile",
  summary:
    "A file's bytes with its media type, Content-Disposition (SVG and HTML always as attachments) and X-Content-Type-Options: nosniff; a Range header gets 206 and those bytes",
  permission: "session.read",
  rateLimit: "request",
  queryCredential: "always",
  params: SidFile,
  query: z.object({ access_token: z.string().optional().meta({ description: "A token, for browsers (an <img> sets no headers)" }) }),
  responses: {
    200: { description: "The file", content: { "application/octet-stream": z.string() } },
    206: { description: "The requested range of the file", content: { "application/octet-stream": z.string() } },
  },
  errors: [404, 416],
  custom: true,
});

export const deleteFile = operation({
  method: "delete",
  path: "/v1/sessions/{sid}/files/{file_id}",
  operationId: "deleteFile",
  summary: "Delete a file (turns that referenced it keep their reference; the bytes are gone)",
  permission: "session.submit",
  rateLimit: "request",
  params: SidFile,
  responses: { 204: { description: "Deleted" } },
  errors: [404],
  custom: true,
});
