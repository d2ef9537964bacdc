// A session's files over HTTP: upload (the raw bytes or a browser's form, bounded here rather than by the 1 MiB JSON limit),
// list, download (with ranges, and headers that keep a browser from running what it downloads) and delete.
import type { Context } from "hono";
import { addFile, type FileStore, fileStore } from "../durable/file-store";
import type { Env } from "../env";
import { ApiError, unwrap } from "../protocol/errors";
import { files as ops } from "../protocol/operations";
import type { FileInfo } from "../protocol/operations/files";
import { bareMediaType, checkMediaType, fileLimits, tooLarge } from "../runtime/file-rules";
import { FORM_OVERHEAD_BYTES, formFile } from "./file-form";
import { type AppEnv, router, sessionStub } from "./http";
import { guards, route } from "./operation-route";

/** The files of a session that exists (404 otherwise, also for one erased). */
async function sessionFiles(env: Env, sid: string): Promise<FileStore> {
  unwrap(await sessionStub(env, sid).access());
  return fileStore(env.BLOBS, sid);
}

/** The body's bytes, refused (413) as soon as they pass `max`, before the rest is read. */
async function readCapped(c: Context<AppEnv>, max: number, tooBig: (size: number) => ApiError): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length"));
  if (declared > max) throw tooBig(declared);
  const body = c.req.raw.body;
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > max) throw tooBig(size);
    chunks.push(chunk);
  }
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
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
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
    const store = await sessionFiles(c.env, sid);
    const limits = fileLimits(c.env);
    const contentType = c.req.header("content-type");
    const media_type = bareMediaType(contentType);
    const tooBig = (size: number) => tooLarge(size, limits);
    let info: FileInfo;
    if (media_type === "multipart/form-data") {
      const file = await formFile(await readCapped(c, limits.maxFileBytes + FORM_OVERHEAD_BYTES, tooBig), contentType!);
      info = await addFile(store, { ...file, filename: filename ?? file.filename }, limits, "file");
    } else {
      checkMediaType(media_type, limits);
      const bytes = await readCapped(c, limits.maxFileBytes, tooBig);
      info = await addFile(store, { bytes, media_type, filename: filename ?? null }, limits);
    }
    await sessionStub(c.env, sid).filesChanged();
    return c.json(info, 201);
  })
  .openapi(route(ops.listFiles), async (c) => {
    const store = await sessionFiles(c.env, c.req.valid("param").sid);
    return c.json({ files: await store.list() }, 200);
  })
  .openapi(route(ops.getFile), async (c) => {
    const { sid, file_id } = c.req.valid("param");
    const store = await sessionFiles(c.env, sid);
    const info = await store.head(file_id);
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
      return c.json(err.toBody(), 416, { "content-range": `bytes */${info.size}` }) as never;
    }
    const object = await store.get(file_id, range ?? undefined);
    if (!object) throw ApiError.notFound("File", file_id);
    if (!range) return new Response(object.body, { headers: { ...headers, "content-length": String(info.size) } }) as never;
    const last = range.offset + range.length - 1;
    headers["content-range"] = `bytes ${range.offset}-${last}/${info.size}`;
    headers["content-length"] = String(range.length);
    return new Response(object.body, { status: 206, headers }) as never;
  })
  .openapi(route(ops.deleteFile), async (c) => {
    const { sid, file_id } = c.req.valid("param");
    const store = await sessionFiles(c.env, sid);
    if (!(await store.delete(file_id))) throw ApiError.notFound("File", file_id);
    await sessionStub(c.env, sid).filesChanged();
    return c.body(null, 204);
  });
