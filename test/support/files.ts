// Real small files for the file tests (a PNG a decoder accepts, a minimal PDF) and an upload helper.
import { SELF } from "cloudflare:test";
import { KEY } from "./api";

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** A `size`×`size` RGB PNG of one colour. */
export async function tinyPng(size = 2, rgb: [number, number, number] = [255, 0, 0]): Promise<Uint8Array> {
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, size);
  view.setUint32(4, size);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour, deflate, no filter, no interlace
  const row = [0, ...Array.from({ length: size }, () => rgb).flat()];
  const pixels = new Uint8Array(Array.from({ length: size }, () => row).flat());
  const signature = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return concat([signature, chunk("IHDR", header), chunk("IDAT", await deflate(pixels)), chunk("IEND", new Uint8Array())]);
}

/** A one-page PDF. */
export function tinyPdf(): Uint8Array {
  return new TextEncoder().encode(
    "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
  );
}

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
