// The conversation as the provider interface takes it (src/engine/model-stream.ts toPrompt): the AI SDK's message
// parts converted one by one, not cast. An image is a file of its media type, an ArrayBuffer becomes bytes, empty
// assistant text and the SDK's approval requests are left out, a tool's "media" content is "image-data" for an
// image and "file-data" otherwise, a message keeps its providerOptions, the results of one step go in one tool
// message, and a message is converted once and the same object reused.
import type { ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { toPrompt } from "../../src/engine/model-stream";

const bytes = new Uint8Array([137, 80, 78, 71]);
/** A tool result with `value` as its content: the SDK's parts going in, the provider's coming out. */
const shot = <const V>(value: V) => ({ type: "tool-result", toolCallId: "c2", toolName: "shot", output: { type: "content", value } }) as const;

describe("toPrompt", () => {
  it("converts user files and images to provider file parts", () => {
    const user: ModelMessage = {
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image", image: bytes.buffer, mediaType: "image/png" },
        { type: "file", data: bytes, mediaType: "application/pdf", filename: "a.pdf" },
      ],
    };
    const [system, message] = toPrompt("be brief", [user]);
    expect(system).toEqual({ role: "system", content: "be brief" });
    expect(message).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "file", data: bytes, mediaType: "image/png" },
        { type: "file", data: bytes, mediaType: "application/pdf", filename: "a.pdf" },
      ],
    });
    expect((message!.content[1] as { data: unknown }).data).toBeInstanceOf(Uint8Array);
  });

  it("leaves out empty assistant text and approval requests, keeps providerOptions, maps media, and joins one step's tool results", () => {
    const messages: ModelMessage[] = [
      {
        role: "assistant",
        content: [
          { type: "text", text: "" },
          { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: { q: 1 } },
          { type: "tool-approval-request", approvalId: "a1", toolCallId: "c1" },
        ],
        providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
      },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "lookup", output: { type: "json", value: { n: 1 } } }] },
      {
        role: "tool",
        content: [
          shot([
            { type: "media", data: "iVBO", mediaType: "image/png" },
            { type: "media", data: "JVBE", mediaType: "application/pdf" },
          ]),
        ],
      },
    ];
    const prompt = toPrompt(undefined, messages);
    expect(prompt).toEqual([
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input: { q: 1 } }],
        providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "lookup", output: { type: "json", value: { n: 1 } } },
          shot([
            { type: "image-data", data: "iVBO", mediaType: "image/png" },
            { type: "file-data", data: "JVBE", mediaType: "application/pdf" },
          ]),
        ],
      },
    ]);
    // Converted once: the next step's request reuses the same assistant message.
    expect(toPrompt(undefined, messages)[0]).toBe(prompt[0]);
  });
});
