// Real small files for the file tests (a PNG a decoder accepts, a minimal PDF: tiny-files.ts) and an upload helper.
import { SELF } from "cloudflare:test";
import { KEY } from "./api";

export { tinyPdf, tinyPng } from "./tiny-files";

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** POST /v1/sessions/:sid/files with the raw bytes. */
export async function upload(sid: string, bytes: Uint8Array, contentType: string, filename?: string, credential = KEY) {
  const query = filename === undefined ? "" : `?filename=${encodeURIComponent(filename)}`;
  const res = await SELF.fetch(`https://runtime.test/v1/sessions/${sid}/files${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}`, "content-type": contentType },
    body: bytes,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** GET a file's bytes (with any headers, e.g. Range). */
export async function download(sid: string, fileId: string, headers: Record<string, string> = {}, credential = KEY) {
  const res = await SELF.fetch(`https://runtime.test/v1/sessions/${sid}/files/${fileId}`, {
    headers: { authorization: `Bearer ${credential}`, ...headers },
  });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}
