// Turn input as parts: files named by id, sent inline or by URL reach the model as the provider's own
// content parts (an image_url with exactly the uploaded bytes, a PDF file part, text files as text), while
// the log and the history keep references, never the bytes; bad parts are 422 naming the part, storing nothing.
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createSession, events, KEY, waitForEvent, waitForTurnEnd } from "../../support/api";
import { BASE, HeadlessChat } from "../../support/chat-client";
import { serverMessages } from "../../support/chat-fixtures";
import { baseURL, requests, script, toolURL, uniqueId } from "../../support/fake-model";
import { download, tinyPdf, tinyPng, toBase64, upload } from "../../support/files";

async function scripted(steps: number) {
  const id = uniqueId("files");
  await script(
    id,
    Array.from({ length: steps }, (_, i) => ({ text: `answer ${i + 1}` })),
  );
  return id;
}

const userContent = (request: any) => request.messages.find((m: any) => m.role === "user").content;

describe("turn input as parts", () => {
  it("hands an uploaded PNG and a PDF to the model as content parts with exactly their bytes; the log keeps references", async () => {
    const id = await scripted(2);
    const sid = await createSession({ name: "turn-files", model: `openai-compatible:${id}` });
    const png = await tinyPng(3, [0, 128, 255]);
    const pdf = tinyPdf();
    const image = (await upload(sid, png, "image/png", "dot.png")).body;
    const input = [
      { type: "text", text: "What is in these?" },
      { type: "file", file_id: image.file_id },
      { type: "file", data: toBase64(pdf), media_type: "application/pdf", filename: "doc.pdf" },
    ];
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    expect(log.at(-1).type).toBe("turn.completed");

    const [request] = await requests(id);
    const content = userContent(request);
    expect(content[0]).toEqual({ type: "text", text: "What is in these?" });
    expect(content[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(png)}` } });
    expect(content[2]).toEqual({ type: "file", file: { filename: "doc.pdf", file_data: `data:application/pdf;base64,${toBase64(pdf)}` } });

    // The inline PDF became a session file; the log names both files and holds neither's bytes.
    const files = (await api("GET", `/v1/sessions/${sid}/files`)).body.files;
    expect(files.map((f: any) => f.media_type).sort()).toEqual(["application/pdf", "image/png"]);
    const submitted = log.find((e) => e.type === "turn.submitted");
    expect(submitted.payload.input).toBe("What is in these?");
    expect(submitted.payload.files).toEqual([
      { file_id: image.file_id, media_type: "image/png", filename: "dot.png", size: png.length },
      { file_id: files.find((f: any) => f.media_type === "application/pdf").file_id, media_type: "application/pdf", filename: "doc.pdf", size: pdf.length },
    ]);
    const whole = JSON.stringify(await events(sid));
    expect(whole).not.toContain(toBase64(png));
    expect(whole).not.toContain(toBase64(pdf));

    // The next turn's request carries the earlier files again, read from R2 (the history holds references).
    const next = await api("POST", `/v1/sessions/${sid}/turns`, { input: "And now?" });
    await waitForTurnEnd(sid, next.body.turn_id);
    const second = (await requests(id))[1];
    expect(JSON.stringify(second.messages)).toContain(toBase64(png));
  });

  it("gives a text file to the model as text with its name, and fetches a URL file only under the allowlist", async () => {
    const id = await scripted(1);
    const sid = await createSession({ name: "turn-text-file", model: `openai-compatible:${id}` });
    const notes = (await upload(sid, new TextEncoder().encode("the answer is 42"), "text/plain", "notes.txt")).body;
    const refused = await api("POST", `/v1/sessions/${sid}/turns`, { input: [{ type: "file", url: "https://elsewhere.example/x.png" }] });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ path: "input[0].url", reason: "is not under TOOL_URL_ALLOWLIST" }]);

    const res = await api("POST", `/v1/sessions/${sid}/turns`, {
      input: [
        { type: "text", text: "Read it" },
        { type: "file", file_id: notes.file_id },
      ],
    });
    await waitForTurnEnd(sid, res.body.turn_id);
    const content = userContent((await requests(id))[0]);
    expect(content[1]).toEqual({ type: "text", text: "[file notes.txt (text/plain)]\nthe answer is 42" });
  });

  it("a resend with the same idempotency_key answers the first turn and keeps one copy of its inline file", async () => {
    const id = await scripted(1);
    const sid = await createSession({ name: "turn-file-resend", model: `openai-compatible:${id}` });
    const body = {
      input: [
        { type: "text", text: "Read it" },
        { type: "file", data: toBase64(new TextEncoder().encode("the code is 7")), media_type: "text/plain", filename: "code.txt" },
      ],
      idempotency_key: "resend-with-file",
    };
    const first = await api("POST", `/v1/sessions/${sid}/turns`, body);
    const again = await api("POST", `/v1/sessions/${sid}/turns`, body);
    expect(again.body).toMatchObject({ turn_id: first.body.turn_id, duplicate: true });
    const files = (await api("GET", `/v1/sessions/${sid}/files`)).body.files;
    expect(files.map((f: any) => f.filename)).toEqual(["code.txt"]);
    expect((await env.BLOBS.list({ prefix: `sessions/${sid}/files/` })).objects).toHaveLength(1);
  });

  it("refuses bad parts with 422 naming the part, and stores nothing", async () => {
    const sid = await createSession({ name: "turn-bad-parts", model: "demo:fast" });
    const cases: [unknown, string][] = [
      [[{ type: "file", file_id: "file_000000000000000000000000" }], "input[0].file_id"],
      [[{ type: "file", data: "%%%", media_type: "image/png" }], "input[0].data"],
      [[{ type: "file", data: toBase64(new TextEncoder().encode("not a png")), media_type: "image/png" }], "input[0]"],
      [[{ type: "file", data: "aGk=" }], "input.0.media_type"],
      [[{ type: "file", file_id: "file_x", data: "aGk=" }], "input.0"],
      [[], "input"],
    ];
    for (const [input, path] of cases) {
      const res = await api("POST", `/v1/sessions/${sid}/turns`, { input });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(
        res.body.error.details.map((d: any) => d.path),
        JSON.stringify(res.body),
      ).toContain(path);
    }
    const zip = await api("POST", `/v1/sessions/${sid}/turns`, { input: [{ type: "file", data: "aGk=", media_type: "application/zip" }] });
    expect(zip.status).toBe(415);
    expect((await env.BLOBS.list({ prefix: `sessions/${sid}/` })).objects).toEqual([]);
    expect((await events(sid)).map((e) => e.type)).toEqual(["session.created"]);
  });
});

describe("models that take no images", () => {
  it("refuses an image for a model declared text-only with 422 naming the part and the model, storing nothing; a PDF still goes", async () => {
    const id = uniqueId("text-only-files"); // MODEL_CAPABILITIES (vitest.config.ts) declares text-only-* so
    await script(id, [{ text: "read it" }]);
    const sid = await createSession({ name: "text-only-model", model: `openai-compatible:${id}` });
    const image = (await upload(sid, await tinyPng(2, [9, 9, 9]), "image/png", "dot.png")).body;
    const pdf = { type: "file", data: toBase64(tinyPdf()), media_type: "application/pdf", filename: "doc.pdf" };
    const res = await api("POST", `/v1/sessions/${sid}/turns`, {
      input: [{ type: "text", text: "What is this?" }, pdf, { type: "file", file_id: image.file_id }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error.details).toEqual([
      { path: "input[2]", reason: `is an image (image/png), and the agent's model "openai-compatible:${id}" takes no images` },
    ]);
    // The inline PDF before it was not stored either: only the upload is there, and the log has no turn.
    expect((await api("GET", `/v1/sessions/${sid}/files`)).body.files.map((f: any) => f.file_id)).toEqual([image.file_id]);
    expect((await events(sid)).map((e) => e.type)).toEqual(["session.created"]);

    const ok = await api("POST", `/v1/sessions/${sid}/turns`, { input: [{ type: "text", text: "And this?" }, pdf] });
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    expect((await waitForTurnEnd(sid, ok.body.turn_id)).at(-1).type).toBe("turn.completed");
    expect(userContent((await requests(id))[0])[1]).toMatchObject({ type: "file" });
  });

  it("refuses a useChat image for the built-in demo:text-only model, and demo:fast takes it", async () => {
    const png = await tinyPng(2, [1, 2, 3]);
    const files = [{ type: "file" as const, mediaType: "image/png", filename: "sq.png", url: `data:image/png;base64,${toBase64(png)}` }];
    const sid = await createSession({ name: "demo-text-only", model: "demo:text-only" });
    const chat = new HeadlessChat({ id: sid });
    await chat.sendMessage({ text: "what is this?", files }).catch(() => {});
    const res = chat.log.exchanges[0]!;
    expect(res.status).toBe(422);
    // The refusal names the image where the request has it: the SDK puts a message's files before its text.
    expect(JSON.parse(await res.raw).error.details).toEqual([
      { path: "messages.0.parts.0", reason: `is an image (image/png), and the agent's model "demo:text-only" takes no images` },
    ]);
    expect((await events(sid)).map((e) => e.type)).toEqual(["session.created"]);
    expect((await env.BLOBS.list({ prefix: `sessions/${sid}/` })).objects).toEqual([]);

    const seeing = await createSession({ name: "demo-sees", model: "demo:fast" });
    await new HeadlessChat({ id: seeing }).sendMessage({ text: "what is this?", files });
    expect((await events(seeing)).some((e) => e.type === "turn.completed")).toBe(true);
  });
});

describe("useChat file parts", () => {
  it("takes a data-URL file part through POST /v1/chat to the model, and /messages gives it back with a fetchable URL", async () => {
    const id = await scripted(1);
    const sid = await createSession({ name: "chat-files", model: `openai-compatible:${id}` });
    const chat = new HeadlessChat({ id: sid });
    const png = await tinyPng(2, [0, 0, 255]);
    await chat.sendMessage({
      text: "what is this?",
      files: [{ type: "file", mediaType: "image/png", filename: "sq.png", url: `data:image/png;base64,${toBase64(png)}` }],
    });
    expect(chat.lastMessage?.role).toBe("assistant");
    const content = userContent((await requests(id))[0]);
    expect(content[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(png)}` } });

    const [user] = (await serverMessages(sid)) as any[];
    expect(user.parts[0]).toEqual({ type: "text", text: "what is this?" });
    expect(user.parts[1]).toMatchObject({
      type: "file",
      mediaType: "image/png",
      filename: "sq.png",
      url: expect.stringMatching(/^\/v1\/sessions\/ses_\w+\/files\/file_\w+$/),
    });
    const got = await SELF.fetch(`${BASE}${user.parts[1].url}`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(got.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(png);
  });

  it("fetches a file part by an allowlisted URL (in a turn and in useChat) to the model; a redirect or a dead host is 422 saying why", async () => {
    const id = await scripted(2);
    const sid = await createSession({ name: "url-files", model: `openai-compatible:${id}` });
    const byUrl = { type: "file", url: `${baseURL}/_files/notes.txt`, filename: "notes.txt" };
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: [{ type: "text", text: "Read it" }, byUrl] });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitForTurnEnd(sid, res.body.turn_id);
    expect(userContent((await requests(id))[0])[1]).toEqual({ type: "text", text: "[file notes.txt (text/plain)]\nfetched by url: the code is 7" });

    const chat = new HeadlessChat({ id: sid });
    await chat.sendMessage({
      text: "and again",
      files: [{ type: "file", mediaType: "text/plain", filename: "again.txt", url: `${baseURL}/_files/notes.txt` }],
    });
    const chatUser = (await requests(id))[1].messages.filter((m: any) => m.role === "user").at(-1);
    expect(chatUser.content).toContainEqual({ type: "text", text: "[file again.txt (text/plain)]\nfetched by url: the code is 7" });

    const refusal = async (url: string) => {
      const r = await api("POST", `/v1/sessions/${sid}/turns`, { input: [{ type: "file", url, media_type: "text/plain" }] });
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.error.details.map((d: any) => d.path)).toEqual(["input[0].url"]);
      return r.body.error.details[0].reason as string;
    };
    expect(await refusal(`${baseURL}/_files/moved`)).toBe("could not be fetched (HTTP 302, a redirect to /v1/_files/notes.txt: redirects are not followed)");
    expect(await refusal(`${baseURL}/_files/missing`)).toBe("could not be fetched (HTTP 404)");
    // Nothing listens there (vitest.config.ts): the reason is the connection's error, not "no response".
    const down = await refusal((env as any).MCP_DOWN_URL);
    expect(down).toMatch(/^could not be fetched \(.+\)$/);
    expect(down).not.toContain("no response");
    expect((await api("GET", `/v1/sessions/${sid}/files`)).body.files).toHaveLength(2);
  });

  it("refuses a file part that is no data or http URL, naming it", async () => {
    const sid = await createSession({ name: "chat-bad-file", model: "demo:fast" });
    const chat = new HeadlessChat({ id: sid });
    await chat.sendMessage({ text: "x", files: [{ type: "file", mediaType: "image/png", url: "ftp://example/x.png" }] }).catch(() => {});
    const res = chat.log.exchanges[0]!;
    expect(res.status).toBe(422);
    expect(JSON.parse(await res.raw).error.details).toEqual([{ path: "messages.0.parts.0.url", reason: "must be a data URL or an http(s) URL" }]);
    expect((await events(sid)).map((e) => e.type)).toEqual(["session.created"]);
  });
});

describe("files tools return", () => {
  it("stores a webhook tool's returned file as a session file, announced by artifact.created and downloadable with ranges", async () => {
    const id = uniqueId("tool-files");
    const png = await tinyPng(5, [0, 200, 0]);
    const files = [
      { data: toBase64(png), media_type: "image/png", filename: "chart.png" },
      { data: "aGk=", media_type: "application/zip", filename: "x.zip" },
    ];
    await script(id, [{ tool_calls: [{ name: "make_files", arguments: { files } }] }, { text: "here is your chart" }]);
    const sid = await createSession({ name: "tool-files", model: `openai-compatible:${id}`, http_tools: [{ name: "make_files", url: toolURL("files") }] });
    const res = await api("POST", `/v1/sessions/${sid}/turns`, { input: "make a chart" });
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    expect(log.at(-1).type).toBe("turn.completed");

    const result = log.find((e) => e.type === "tool.result");
    const created = log.filter((e) => e.type === "artifact.created");
    expect(created).toHaveLength(1);
    const { file_id } = created[0].payload;
    expect(created[0].payload).toEqual({ file_id, media_type: "image/png", size: png.length, filename: "chart.png", tool_call_id: result.tool_call_id });
    expect(created[0].sequence).toBeLessThan(result.sequence);
    // The result holds the reference (the refused file its reason), never the bytes; so does the model's next prompt.
    expect(result.payload.output.files[0]).toEqual({ file_id, media_type: "image/png", filename: "chart.png", size: png.length });
    expect(result.payload.output.files[1].error).toMatch(/FILES_MEDIA_TYPES/);
    expect(JSON.stringify(result)).not.toContain(toBase64(png));
    const toolMessage = (await requests(id))[1].messages.find((m: any) => m.role === "tool");
    expect(toolMessage.content).toContain(file_id);
    expect(toolMessage.content).not.toContain(toBase64(png));

    const whole = await download(sid, file_id);
    expect(whole.bytes).toEqual(png);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("content-disposition")).toBe(`inline; filename="chart.png"; filename*=UTF-8''chart.png`);
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    const part = await download(sid, file_id, { range: "bytes=8-15" });
    expect(part.status).toBe(206);
    expect(part.bytes).toEqual(png.slice(8, 16));
    expect((await api("GET", `/v1/sessions/${sid}/files`)).body.files.map((f: any) => f.file_id)).toEqual([file_id]);
    // A useChat client gets it as a file part of the answer, after a reload too.
    const [, answer] = (await serverMessages(sid)) as any[];
    expect(answer.parts.filter((p: any) => p.type === "file")).toEqual([{ type: "file", mediaType: "image/png", url: `/v1/sessions/${sid}/files/${file_id}` }]);
  });
});

describe("fork and replay with files", () => {
  async function turnWithImage() {
    const id = await scripted(1);
    const sid = await createSession({ name: "files-fork", model: `openai-compatible:${id}` });
    const png = await tinyPng(4, [10, 20, 30]);
    const image = (await upload(sid, png, "image/png", "p.png")).body;
    const res = await api("POST", `/v1/sessions/${sid}/turns`, {
      input: [
        { type: "text", text: "look" },
        { type: "file", file_id: image.file_id },
      ],
    });
    const log = await waitForTurnEnd(sid, res.body.turn_id);
    return { id, sid, png, image, turnId: res.body.turn_id, log };
  }

  it("a fork carries the files its conversation names: its next model call gets the image's bytes", async () => {
    const src = await turnWithImage();
    await script(src.id, [{ text: "still a dot" }]);
    const forked = await api("POST", `/v1/sessions/${src.sid}/fork`, { at_sequence: src.log.at(-1).sequence });
    expect(forked.status, JSON.stringify(forked.body)).toBe(201);
    const fid = forked.body.session_id;
    expect((await api("GET", `/v1/sessions/${fid}/files`)).body.files.map((f: any) => f.file_id)).toEqual([src.image.file_id]);
    // The source deleting its copy leaves the fork's.
    expect((await api("DELETE", `/v1/sessions/${src.sid}/files/${src.image.file_id}`)).status).toBe(204);
    const next = await api("POST", `/v1/sessions/${fid}/turns`, { input: "and now?" });
    await waitForTurnEnd(fid, next.body.turn_id);
    const [request] = await requests(src.id);
    expect(JSON.stringify(request.messages)).toContain(`data:image/png;base64,${toBase64(src.png)}`);
  });

  it("a replay of a turn with a file resubmits it with the file, and answers from the recording (no divergence)", async () => {
    const src = await turnWithImage();
    await script(src.id, [{ text: "a live answer" }]);
    const res = await api("POST", `/v1/sessions/${src.sid}/turns/${src.turnId}/replay`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { exec_id, turn_id } = res.body;
    const log = await waitForTurnEnd(exec_id, turn_id);
    const done = await waitForEvent(exec_id, (e) => e.type === "replay.completed");
    expect(log.find((e) => e.type === "turn.submitted" && e.turn_id === turn_id).payload.files).toEqual([
      { file_id: src.image.file_id, media_type: "image/png", filename: "p.png", size: src.png.length },
    ]);
    expect(done.payload.diverged).toBeNull();
    expect(await requests(src.id)).toEqual([]);
  });
});
