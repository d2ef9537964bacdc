// A session's files over HTTP: upload (the raw bytes or a browser's form, bounded here rather than by the 1 MiB JSON limit),
// list, download (with ranges, and headers that keep a browser from running what it downloads) and delete.
import type { Context } from "hono";
import type { Env } from "../env";
import { ApiError, unwrap } from "../protocol/errors";
import { files as ops } from "../protocol/operations";
import type { FileInfo } from "../protocol/operations/files";
import { intParam } from "../protocol/strict-values";
import type { FileLedger, FileOp } from "../session/files/file-ledger";
import { bareMediaType, fileLimits, tooLarge } from "../session/files/file-rules";
import { findFile, isFileId, type SessionFiles, storeFile } from "../session/files/file-store";
import { FORM_OVERHEAD_BYTES, formFile } from "./file-form";
import { type AppEnv, router, sessionCalls } from "./http";
import { decodeCursor, encodeCursor } from "./keyset-cursor";
import { guards, route } from "./operation-route";

/** The ledger of a session's files, in its session object (each call 404 for a session that does not exist or was erased). */
export function sessionFiles(env: Env, sid: string): SessionFiles {
  const stub = sessionCalls(env, sid);
  const op =
    <K extends FileOp>(name: K) =>
    async (...args: Parameters<FileLedger[K]>): Promise<Awaited<ReturnType<FileLedger[K]>>> =>
      unwrap(await stub.fileOp(name, ...args));
  return { reserve: op("reserve"), stored: op("stored"), release: op("release"), page: op("page"), head: op("head"), remove: op("remove"), all: op("all") };
}

/** How much of a refused body is still read (and dropped), so the connection stays usable for the client's next request. */
const DRAIN_BYTES = 8 * 1024 * 1024;

/**
 * The body's bytes, refused (413) once they pass `max`: what follows is read and dropped (up to DRAIN_BYTES, then
 * the body is cancelled), so the refusal is a whole response on a connection the client can use again.
 */
async function readCapped(c: Context<AppEnv>, max: number, tooBig: (size: number) => ApiError): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length"));
  if (declared > max + DRAIN_BYTES) throw tooBig(declared); // too much to read for the connection's sake
  const body = c.req.raw.body;
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size <= max) chunks.push(value);
    else if (size > max + DRAIN_BYTES) {
      await reader.cancel();
      break;
    }
  }
  if (size > max) throw tooBig(size);
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

// Types a browser may show in its window; anything else (SVG and HTML, which can run script) is downloaded.
const INLINE = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "application/pdf",
  "text/plain",
  "text/csv",
  "text/markdown",
  "application/json",
]);

function disposition(mediaType: string, filename: string | null): string {
  const kind = INLINE.has(mediaType) ? "inline" : "attachment";
  if (!filename) return kind;
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  // RFC 5987's attr-char leaves out ' ( ) *, which encodeURIComponent keeps.
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The single byte range a Range header asks for; null for none, one malformed or several (the whole file is sent). */
function byteRange(header: string | undefined, size: number): { offset: number; length: number } | null | "unsatisfiable" {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header?.trim() ?? "");
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Math.min(Number(m[2]), size);
    return suffix === 0 ? "unsatisfiable" : { offset: size - suffix, length: suffix };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return "unsatisfiable";
  if (end < start) return null;
  return { offset: start, length: end - start + 1 };
}

export const files = router()
  .openapi({ ...route(ops.uploadFile), middleware: guards(ops.uploadFile, { readsBody: false, limitsBody: false }) }, async (c) => {
    const { sid } = c.req.valid("param");
    const { filename } = c.req.valid("query");
    const store = sessionFiles(c.env, sid);
    const limits = fileLimits(c.env);
    const contentType = c.req.header("content-type");
    const media_type = bareMediaType(contentType);
    const tooBig = (size: number) => tooLarge(size, limits);
    let info: FileInfo;
    if (media_type === "multipart/form-data") {
      const file = await formFile(await readCapped(c, limits.maxFileBytes + FORM_OVERHEAD_BYTES, tooBig), contentType!);
      info = await storeFile(store, c.env.BLOBS, { ...file, filename: filename ?? file.filename }, limits, "file");
    } else {
      // The media type is checked with the bytes (storeFile), after the body is read: a refusal keeps the connection.
      const bytes = await readCapped(c, limits.maxFileBytes, tooBig);
      info = await storeFile(store, c.env.BLOBS, { bytes, media_type, filename: filename ?? null }, limits);
    }
    return c.json(info, 201);
  })
  .openapi(route(ops.listFiles), async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const query = { after: cursor === undefined ? null : decodeCursor(cursor), limit: intParam("limit", limit, { min: 1, max: 1000 }, 100) };
    const page = await sessionFiles(c.env, c.req.valid("param").sid).page(query);
    return c.json({ files: page.files, next_cursor: page.next && encodeCursor(...page.next) }, 200);
  })
  .openapi(route(ops.getFile), async (c) => {
    const { sid, file_id } = c.req.valid("param");
    const info = await findFile(sessionFiles(c.env, sid), file_id);
    if (!info) throw ApiError.notFound("File", file_id);
    const range = byteRange(c.req.header("range"), info.size);
    const headers: Record<string, string> = {
      "content-type": info.media_type.startsWith("text/") ? `${info.media_type}; charset=utf-8` : info.media_type,
      "content-disposition": disposition(info.media_type, info.filename),
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "accept-ranges": "bytes",
      etag: `"${info.sha256}"`,
    };
    if (range === "unsatisfiable") {
      const err = new ApiError("range_not_satisfiable", `The file has ${info.size} bytes; the range asks for bytes past its end`);
      return c.json(err.toBody(), 416, { "content-range": `bytes */${info.size}` });
    }
    const object = await c.env.BLOBS.get(info.key, range ? { range } : undefined);
    if (!object) throw ApiError.notFound("File", file_id);
    if (!range) return c.body(object.body, 200, { ...headers, "content-length": String(info.size) });
    const last = range.offset + range.length - 1;
    headers["content-range"] = `bytes ${range.offset}-${last}/${info.size}`;
    headers["content-length"] = String(range.length);
    return c.body(object.body, 206, headers);
  })
  .openapi(route(ops.deleteFile), async (c) => {
    const { sid, file_id } = c.req.valid("param");
    const removed = isFileId(file_id) ? await sessionFiles(c.env, sid).remove(file_id) : null;
    if (!removed) throw ApiError.notFound("File", file_id);
    if (removed.key) await c.env.BLOBS.delete(removed.key);
    return c.body(null, 204);
  });
