// The workspace tools reach the session's files: workspace_list shows them under files/, and
// workspace_read gives a text file as text and an image as a file part of the next model request (exactly its
// bytes), like a turn's input files; the files are read-only there, and a missing one is a clear tool error.
import { describe, expect, it } from "vitest";
import { api, events, submitTurn, waitForTurnEnd } from "../../support/api";
import { requests, script, uniqueId } from "../../support/fake-model";
import { tinyPng, toBase64, upload } from "../../support/files";

async function session(scriptId: string): Promise<string> {
  const agent = { name: "workspace-files", model: `openai-compatible:${scriptId}`, tools: ["workspace_read", "workspace_list", "workspace_write"] };
  const res = await api("POST", "/v1/sessions", { agent });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.session_id;
}

const resultOf = (log: any[], callId: string) => log.find((e) => e.type === "tool.result" && e.tool_call_id === callId).payload;

describe("workspace tools and session files", () => {
  it("lists the session's files under files/, reads text as text and hands an image to the next model call", async () => {
    const id = uniqueId("ws-files");
    const sid = await session(id);
    const png = await tinyPng(4, [200, 10, 50]);
    const notes = (await upload(sid, new TextEncoder().encode("the answer is 42"), "text/plain", "notes.txt")).body;
    const image = (await upload(sid, png, "image/png", "dot.png")).body;
    await script(id, [
      {
        tool_calls: [
          { id: "call_list", name: "workspace_list", arguments: { path: "files" } },
          { id: "call_text", name: "workspace_read", arguments: { path: "files/notes.txt" } },
          { id: "call_image", name: "workspace_read", arguments: { path: `files/${image.file_id}` } },
          { id: "call_missing", name: "workspace_read", arguments: { path: "files/nothing.pdf" } },
          { id: "call_write", name: "workspace_write", arguments: { path: "files/new.txt", content: "x" } },
        ],
      },
      { text: "done" },
    ]);
    const { turn_id } = await submitTurn(sid, "look at my files");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.at(-1).type, JSON.stringify(log.at(-1))).toBe("turn.completed");

    expect(resultOf(log, "call_list").output).toEqual({
      files: [
        { path: `files/${notes.file_id}`, bytes: 16, media_type: "text/plain", filename: "notes.txt" },
        { path: `files/${image.file_id}`, bytes: png.length, media_type: "image/png", filename: "dot.png" },
      ],
    });
    expect(resultOf(log, "call_text")).toMatchObject({ output: "the answer is 42", is_error: false });
    const read = resultOf(log, "call_image");
    expect(read.is_error).toBe(false);
    expect(read.output.attached_file).toEqual({ file_id: image.file_id, media_type: "image/png", filename: "dot.png", size: png.length });
    const missing = resultOf(log, "call_missing");
    expect(missing.is_error).toBe(true);
    expect(missing.output).toContain('No session file "files/nothing.pdf"');
    const write = resultOf(log, "call_write");
    expect(write.is_error).toBe(true);
    expect(write.output).toContain("read-only");

    // The next request: the step's tool results, then a user message with the image as an image part.
    const [, next] = await requests(id);
    const roles = next.messages.map((m: any) => m.role);
    expect(roles).toEqual(["user", "assistant", "tool", "tool", "tool", "tool", "tool", "user"]);
    expect(next.messages.find((m: any) => m.tool_call_id === "call_text").content).toBe("the answer is 42");
    const files = next.messages.at(-1).content;
    expect(files).toEqual([
      { type: "text", text: "[files read by workspace_read]" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(png)}` } },
    ]);
    // The log keeps the reference, never the bytes.
    expect(JSON.stringify(await events(sid))).not.toContain(toBase64(png));
  });

  it("lists the session's files after the workspace's own at the root, and the image reaches later turns' requests too", async () => {
    const id = uniqueId("ws-files-root");
    const sid = await session(id);
    const png = await tinyPng(2, [1, 2, 3]);
    const image = (await upload(sid, png, "image/png", "shot.png")).body;
    await script(id, [
      { tool_calls: [{ id: "call_w", name: "workspace_write", arguments: { path: "plan.md", content: "plan" } }] },
      { tool_calls: [{ id: "call_root", name: "workspace_list", arguments: {} }] },
      { tool_calls: [{ id: "call_read", name: "workspace_read", arguments: { path: "files/shot.png" } }] },
      { text: "seen" },
      { text: "again" },
    ]);
    const first = await submitTurn(sid, "list and look");
    const log = await waitForTurnEnd(sid, first.turn_id);
    expect(resultOf(log, "call_root").output.files).toEqual([
      { path: "plan.md", bytes: 4 },
      { path: `files/${image.file_id}`, bytes: png.length, media_type: "image/png", filename: "shot.png" },
    ]);
    const second = await submitTurn(sid, "and now?");
    await waitForTurnEnd(sid, second.turn_id);
    const later = (await requests(id))[4];
    expect(later.messages.at(-1)).toEqual({ role: "user", content: "and now?" });
    expect(JSON.stringify(later.messages)).toContain(`data:image/png;base64,${toBase64(png)}`);
  });
});
