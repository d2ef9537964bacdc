// Session files through the public surface: upload, list, download (headers, ranges), delete; every limit's
// 4xx with nothing stored; access by tokens; erase leaving no R2 object.
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createSession, KEY, waitForTurnEnd } from "../../support/api";
import { until } from "../../support/chat-client";
import { download, sha256Hex, tinyPdf, tinyPng, toBase64, upload } from "../../support/files";

const r2Keys = async (sid: string) => (await env.BLOBS.list({ prefix: `sessions/${sid}/` })).objects.map((o) => o.key);

async function token(body: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/v1/tokens", { ttl_s: 600, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.token;
}

describe("files", () => {
  it("uploads a PNG, lists it, serves its exact bytes with safe headers and ranges, and deletes it", async () => {
    const sid = await createSession({ name: "files-basic", model: "demo:fast" });
    const png = await tinyPng(4);
    const up = await upload(sid, png, "image/png", "red dot.png");
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    expect(up.body).toMatchObject({ media_type: "image/png", size: png.length, sha256: await sha256Hex(png), filename: "red dot.png" });
    expect(up.body.file_id).toMatch(/^file_[0-9a-f]{24}$/);

    expect((await api("GET", `/v1/sessions/${sid}/files`)).body.files).toEqual([up.body]);

    const whole = await download(sid, up.body.file_id);
    expect(whole.status).toBe(200);
    expect(whole.bytes).toEqual(png);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    expect(whole.headers.get("content-disposition")).toBe(`inline; filename="red dot.png"; filename*=UTF-8''red%20dot.png`);
    expect(whole.headers.get("accept-ranges")).toBe("bytes");

    const head = await download(sid, up.body.file_id, { range: "bytes=0-7" });
    expect(head.status).toBe(206);
    expect(head.bytes).toEqual(png.slice(0, 8));
    expect(head.headers.get("content-range")).toBe(`bytes 0-7/${png.length}`);
    const tail = await download(sid, up.body.file_id, { range: "bytes=-4" });
    expect(tail.status).toBe(206);
    expect(tail.bytes).toEqual(png.slice(-4));
    const past = await download(sid, up.body.file_id, { range: `bytes=${png.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${png.length}`);

    const gone = await api("DELETE", `/v1/sessions/${sid}/files/${up.body.file_id}`);
    expect(gone.status).toBe(204);
    expect((await download(sid, up.body.file_id)).status).toBe(404);
    expect((await api("DELETE", `/v1/sessions/${sid}/files/${up.body.file_id}`)).status).toBe(404);
    expect((await api("GET", `/v1/sessions/${sid}/files`)).body.files).toEqual([]);
    expect(await r2Keys(sid)).toEqual([]);
  });

  it("serves SVG as an attachment, text with its charset, and a PDF inline", async () => {
    const sid = await createSession({ name: "files-kinds", model: "demo:fast" });
    const svg = await upload(
      sid,
      new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      "image/svg+xml",
      "x.svg",
    );
    expect((await download(sid, svg.body.file_id)).headers.get("content-disposition")).toMatch(/^attachment;/);
    const text = await upload(sid, new TextEncoder().encode("hello"), "text/plain; charset=utf-8");
    expect(text.body).toMatchObject({ media_type: "text/plain", filename: null });
    const got = await download(sid, text.body.file_id);
    expect(got.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(got.headers.get("content-disposition")).toBe("inline");
    const pdf = await upload(sid, tinyPdf(), "application/pdf", "doc.pdf");
    expect(pdf.status).toBe(201);
    expect((await download(sid, pdf.body.file_id)).headers.get("content-disposition")).toMatch(/^inline;/);
  });

  it("answers each limit with its 4xx, naming it, and stores nothing", async () => {
    const sid = await createSession({ name: "files-limits", model: "demo:fast" });
    const cases: [Uint8Array, string, string | undefined, number, RegExp][] = [
      [new Uint8Array([1, 2, 3]), "application/zip", undefined, 415, /FILES_MEDIA_TYPES/],
      [new Uint8Array(2 * 1024 * 1024 + 1).fill(65), "text/plain", undefined, 413, /FILES_MAX_BYTES/],
      [new Uint8Array(), "text/plain", undefined, 422, /empty/],
      [new TextEncoder().encode("not a png"), "image/png", undefined, 422, /does not look like image\/png/],
      [new TextEncoder().encode("hi"), "text/plain", "../etc/passwd", 422, /filename/],
      [new TextEncoder().encode("hi"), "", undefined, 422, /content-type/],
    ];
    for (const [bytes, type, filename, status, reason] of cases) {
      const res = await upload(sid, bytes, type, filename);
      expect(res.status, `${type} ${bytes.length}`).toBe(status);
      expect(res.body.error.message).toMatch(reason);
    }
    expect(await r2Keys(sid)).toEqual([]);

    // The session's total: 1.6 MiB fits, a second 1.6 MiB would pass 3 MiB.
    const half = new Uint8Array(1.6 * 1024 * 1024).fill(66);
    expect((await upload(sid, half, "text/csv")).status).toBe(201);
    const over = await upload(sid, half, "text/csv");
    expect(over.status).toBe(413);
    expect(over.body.error.message).toMatch(/FILES_MAX_SESSION_BYTES/);
    expect(await r2Keys(sid)).toHaveLength(1);
  });

  it("takes a browser form (multipart/form-data) with the same limits and errors as raw bytes", async () => {
    const sid = await createSession({ name: "files-form", model: "demo:fast" });
    const post = async (form: FormData, query = "") => {
      const res = await SELF.fetch(`https://runtime.test/v1/sessions/${sid}/files${query}`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}` },
        body: form,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const formOf = (file: Blob | string, name = "photo.png") => {
      const form = new FormData();
      if (typeof file === "string") form.set("file", file);
      else form.set("file", file, name);
      return form;
    };
    const png = await tinyPng(2);
    const stored = await post(formOf(new Blob([png], { type: "image/png" })));
    expect(stored.status, JSON.stringify(stored.body)).toBe(201);
    expect(stored.body).toMatchObject({ media_type: "image/png", size: png.length, filename: "photo.png" });
    expect((await download(sid, stored.body.file_id)).bytes).toEqual(png);
    // ?filename= wins over the form's name, as for raw bytes.
    expect((await post(formOf(new Blob(["hi"], { type: "text/plain" }), "a.txt"), "?filename=b.txt")).body.filename).toBe("b.txt");

    const cases: [FormData, number, RegExp, string?][] = [
      [formOf(new Blob([new Uint8Array([1, 2])], { type: "application/zip" })), 415, /file.media_type application\/zip is not accepted/],
      [formOf(new Blob([new Uint8Array(2 * 1024 * 1024 + 1).fill(65)], { type: "text/plain" })), 413, /FILES_MAX_BYTES/],
      [formOf(new Blob(["not a png"], { type: "image/png" })), 422, /does not look like image\/png/, "file"],
      [formOf(new Blob([], { type: "text/plain" })), 422, /empty/, "file"],
      [formOf(new Blob(["hi"], { type: "text/plain" }), "../x.txt"), 422, /filename/, "file.filename"],
      [formOf("just text"), 422, /one file field/, "file"],
      [new FormData(), 422, /one file field/, "file"],
    ];
    for (const [form, status, reason, path] of cases) {
      const res = await post(form);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error.message).toMatch(reason);
      if (path) expect(res.body.error.details.map((d: any) => d.path)).toEqual([path]);
    }
    expect(await r2Keys(sid)).toHaveLength(2);
  });

  it("a token reaches only its session's files; a read-only token downloads (as access_token) but cannot upload", async () => {
    const sid = await createSession({ name: "files-tokens", model: "demo:fast" });
    const other = await createSession({ name: "files-tokens-other", model: "demo:fast" });
    const { body: file } = await upload(sid, new TextEncoder().encode("mine"), "text/plain");
    const stranger = await token({ subject: "s", session_id: other });
    expect((await download(sid, file.file_id, {}, stranger)).status).toBe(403);
    expect((await upload(sid, new TextEncoder().encode("x"), "text/plain", undefined, stranger)).status).toBe(403);

    const reader = await token({ subject: "r", session_id: sid, scopes: ["read"] });
    const viaQuery = await SELF.fetch(`https://runtime.test/v1/sessions/${sid}/files/${file.file_id}?access_token=${reader}`);
    expect(new TextDecoder().decode(await viaQuery.arrayBuffer())).toBe("mine");
    expect((await upload(sid, new TextEncoder().encode("x"), "text/plain", undefined, reader)).status).toBe(403);
    expect((await api("GET", `/v1/sessions/${sid}/files`)).body.files).toHaveLength(1);
  });

  it("a missing session is 404; the export lists the files; erasing a session leaves none of its files in R2", async () => {
    expect((await upload("ses_000000000000000000000000", new TextEncoder().encode("x"), "text/plain")).status).toBe(404);
    const sid = await createSession({ name: "files-erase", model: "demo:fast" });
    await upload(sid, await tinyPng(), "image/png");
    await upload(sid, tinyPdf(), "application/pdf");
    expect(await r2Keys(sid)).toHaveLength(2);
    // The export lists them (not their bytes) in its header line.
    const exported = await SELF.fetch(`https://runtime.test/v1/sessions/${sid}/export`, { headers: { authorization: `Bearer ${KEY}` } });
    const header = JSON.parse((await exported.text()).split("\n")[0]!);
    expect(header.files.map((f: any) => f.media_type).sort()).toEqual(["application/pdf", "image/png"]);
    expect(header.file_route).toBe(`/v1/sessions/${sid}/files/{file_id}`);
    expect((await api("DELETE", `/v1/sessions/${sid}`)).status).toBe(204);
    expect(await r2Keys(sid)).toEqual([]);
    expect((await api("GET", `/v1/sessions/${sid}/files`)).status).toBe(404);
  });

  it("counts the files' stored bytes in the session's index row and GET /v1/usage, on upload, attachment, delete and erase", async () => {
    const agent = `files-usage-${crypto.randomUUID().slice(0, 8)}`;
    const [a, b] = [await createSession({ name: agent, model: "demo:fast" }), await createSession({ name: agent, model: "demo:fast" })];
    const storedOf = async (sid: string) =>
      (await api("GET", `/v1/sessions?agent=${agent}`)).body.sessions.find((s: any) => s.session_id === sid)?.stored_bytes;
    const tenant = async () => (await api("GET", `/v1/usage?agent=${agent}`)).body.stored_bytes;
    const settled = (sid: string, bytes: number) => until(async () => (await storedOf(sid)) === bytes, `${bytes} bytes stored for ${sid}`);

    const png = await tinyPng(4);
    const pdf = tinyPdf();
    const image = (await upload(a, png, "image/png")).body;
    await upload(a, pdf, "application/pdf");
    await upload(b, new TextEncoder().encode("twelve bytes"), "text/plain");
    await settled(a, png.length + pdf.length);
    await settled(b, 12);
    expect(await tenant()).toBe(png.length + pdf.length + 12);

    // A file sent inline with a turn is stored too, and counted once the turn has ended.
    const notes = new TextEncoder().encode("inline notes");
    const turn = await api("POST", `/v1/sessions/${b}/turns`, { input: [{ type: "file", data: toBase64(notes), media_type: "text/plain" }] });
    await waitForTurnEnd(b, turn.body.turn_id);
    await settled(b, 12 + notes.length);

    expect((await api("DELETE", `/v1/sessions/${a}/files/${image.file_id}`)).status).toBe(204);
    await settled(a, pdf.length);
    expect(await tenant()).toBe(pdf.length + 12 + notes.length);

    // An erased session leaves the index, and its bytes the totals.
    expect((await api("DELETE", `/v1/sessions/${a}`)).status).toBe(204);
    await until(async () => (await tenant()) === 12 + notes.length, "the erased session's bytes gone from the totals");
  });

  it("reserves the session's quota before storing: concurrent uploads store at most FILES_MAX_SESSION_BYTES, the rest 413", async () => {
    const sid = await createSession({ name: "files-race", model: "demo:fast" });
    const mib = new Uint8Array(1024 * 1024).fill(67);
    const results = await Promise.all(Array.from({ length: 8 }, () => upload(sid, mib, "text/csv")));
    const stored = results.filter((r) => r.status === 201);
    expect(stored).toHaveLength(3); // 3 MiB a session (vitest.config.ts)
    for (const r of results.filter((r) => r.status !== 201)) {
      expect(r.status).toBe(413);
      expect(r.body.error.message).toMatch(/FILES_MAX_SESSION_BYTES/);
    }
    const listed = (await api("GET", `/v1/sessions/${sid}/files`)).body.files;
    expect(listed.reduce((n: number, f: any) => n + f.size, 0)).toBe(3 * mib.length);
    expect(await r2Keys(sid)).toHaveLength(3);
    // A turn's inline file goes through the same reservation: the session is full.
    const inline = await api("POST", `/v1/sessions/${sid}/turns`, {
      input: [{ type: "file", data: toBase64(new TextEncoder().encode("x")), media_type: "text/plain" }],
    });
    expect(inline.status).toBe(413);
    expect(inline.body.error.message).toMatch(/FILES_MAX_SESSION_BYTES/);
  });

  it("keeps at most FILES_MAX_SESSION_FILES files (409 past it), and lists them in pages", async () => {
    const sid = await createSession({ name: "files-count", model: "demo:fast" });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => upload(sid, new TextEncoder().encode(`file ${i}`), "text/plain")));
    expect(results.filter((r) => r.status === 201)).toHaveLength(25); // 25 a session (vitest.config.ts)
    for (const r of results.filter((r) => r.status !== 201)) {
      expect(r.status).toBe(409);
      expect(r.body.error.message).toMatch(/FILES_MAX_SESSION_FILES/);
    }
    expect(await r2Keys(sid)).toHaveLength(25);

    // Pages of 10, oldest first, together every file once; the default page takes them all.
    const all = (await api("GET", `/v1/sessions/${sid}/files`)).body;
    expect(all.files).toHaveLength(25);
    expect(all.next_cursor).toBeNull();
    const paged: any[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `limit=10&cursor=${cursor}` : "limit=10";
      const page = (await api("GET", `/v1/sessions/${sid}/files?${query}`)).body;
      expect(page.files.length).toBeLessThanOrEqual(10);
      paged.push(...page.files);
      cursor = page.next_cursor;
    } while (cursor);
    expect(paged).toEqual(all.files);
    for (const [query, path] of [
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["limit=ten", "limit"],
      ["cursor=nonsense", "cursor"],
    ]) {
      const res = await api("GET", `/v1/sessions/${sid}/files?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.error.details.map((d: any) => d.path)).toEqual([path]);
    }

    // Deleting one makes room for one.
    expect((await api("DELETE", `/v1/sessions/${sid}/files/${all.files[0].file_id}`)).status).toBe(204);
    expect((await upload(sid, new TextEncoder().encode("room"), "text/plain")).status).toBe(201);
    expect((await upload(sid, new TextEncoder().encode("full"), "text/plain")).status).toBe(409);
  });

  it("refuses names with bidirectional or control characters, and percent-encodes ' ( ) * in filename*", async () => {
    const sid = await createSession({ name: "files-names", model: "demo:fast" });
    for (const name of ["invoice\u202Etxt.exe", "a\u2066b.txt", "nel\u0085.txt", "rlm\u200F.txt"]) {
      const res = await upload(sid, new TextEncoder().encode("x"), "text/plain", name);
      expect(res.status, JSON.stringify(name)).toBe(422);
      expect(res.body.error.details.map((d: any) => d.path)).toEqual(["filename"]);
    }
    expect(await r2Keys(sid)).toEqual([]);
    const ok = await upload(sid, new TextEncoder().encode("x"), "text/plain", "it's (1)*.txt");
    expect(ok.status).toBe(201);
    expect((await download(sid, ok.body.file_id)).headers.get("content-disposition")).toBe(
      `inline; filename="it's (1)*.txt"; filename*=UTF-8''it%27s%20%281%29%2A.txt`,
    );
  });
});
