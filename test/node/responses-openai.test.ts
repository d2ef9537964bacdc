// The Open Responses API driven by the official `openai` package, as any OpenAI client would: create, stream,
// background then retrieve then resume from `starting_after` after a restart of the runtime, cancel, a chain
// of three responses, an image input, an approval and a question answered with input items, and refusals that
// the package turns into its APIError classes. The runtime is a whole process (Miniflare on a persisted state
// directory) on the offline demo model.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import OpenAI from "openai";
import type { Response as OpenAIResponse, ResponseOutputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutputItem, ResponseObject } from "../../src/views/response-object";
import type { StreamEventType } from "../../src/views/responses-stream";
import { tinyPng } from "../support/tiny-files";
import { callRuntime, runtimeProcess, workerBundle } from "./support/runtime-process";

// The runtime's shapes as the package types them (checked by tsc): every output item and stream event name is
// one of its own, and so is the response object but for the fields where the runtime says more or less
// (docs/reference/responses.md): error.code and incomplete_details.reason are open, usage has no cache writes.
type Assert<T extends true> = T;
type Fits<A, B> = [A] extends [B] ? true : false;
type Open = "error" | "usage" | "incomplete_details";
type Checks = [
  Assert<Fits<OutputItem, ResponseOutputItem>>,
  Assert<Fits<StreamEventType, ResponseStreamEvent["type"]>>,
  Assert<Fits<Omit<ResponseObject, Open>, Omit<OpenAIResponse, Open | "output_text">>>,
];

const KEY = "responses-openai-key";
const bundle = workerBundle();
let state: string;
let mf: Miniflare;
let client: OpenAI;

/** A runtime process on the test's state, and an OpenAI client of its address. */
async function start(): Promise<void> {
  mf = runtimeProcess(bundle, state, { API_KEYS: KEY, LOGS: "off" });
  client = new OpenAI({ baseURL: new URL("/v1", await mf.ready).href, apiKey: KEY, maxRetries: 0 });
}

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "agent-runtime-openai-"));
  await start();
  const agents = {
    "oa-calc": { model: "demo:fast", tools: ["calculator", "ask_user"] },
    "oa-slow": { model: "demo:slow" },
    "oa-careful": { model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] },
  };
  for (const [name, config] of Object.entries(agents)) await callRuntime(mf, KEY, "PUT", `/v1/agents/${name}`, config);
}, 180_000);

afterAll(async () => {
  await mf?.dispose();
  rmSync(state, { recursive: true, force: true });
});

/** Every event of a stream, in order. */
async function all<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe("the openai package against the runtime", () => {
  it("types the runtime's items, stream event names and response object (checked as the tests compile)", () => {
    const fits: Checks = [true, true, true];
    expect(fits).toEqual([true, true, true]);
  });

  it("creates a response: the agent's tool calls as items, the answer as output_text, usage", async () => {
    const response = await client.responses.create({ model: "oa-calc", input: "what is 2 * (3 + 4)?", metadata: { order: "o-17" } });
    // `model` names the version that answered.
    expect(response).toMatchObject({ object: "response", status: "completed", model: "oa-calc@1", error: null, background: false });
    expect(response.output_text).toBe("The answer is 14.");
    expect(response.output.map((i) => i.type)).toEqual(["function_call", "function_call_output", "message"]);
    expect(response.usage?.input_tokens_details.cached_tokens).toEqual(expect.any(Number));
    expect(response.metadata).toEqual({ order: "o-17" });
    const again = await client.responses.retrieve(response.id);
    expect(again).toMatchObject({ id: response.id, model: "oa-calc@1", status: "completed", metadata: { order: "o-17" }, previous_response_id: null });
    expect(again.output_text).toBe("The answer is 14.");
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toMatchObject([{ type: "message", role: "user", content: [{ type: "input_text", text: "what is 2 * (3 + 4)?" }] }]);
  });

  it("streams: the events the package types, numbered from 0, and the stream helper's final response", async () => {
    const events = await all(await client.responses.create({ model: "oa-calc", input: "hello", stream: true }));
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]!.type).toBe("response.created");
    expect(events.at(-1)!.type).toBe("response.completed");
    const models = events.flatMap((e) => ("response" in e ? [e.response.model] : []));
    expect(models.length).toBeGreaterThan(2);
    expect(new Set(models)).toEqual(new Set(["oa-calc@1"]));
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    const done = events.find((e): e is Extract<ResponseStreamEvent, { type: "response.output_text.done" }> => e.type === "response.output_text.done");
    expect(done?.text).toBe(deltas);
    // The helper accumulates the response from the events and checks each one fits what came before.
    const helper = client.responses.stream({ model: "oa-calc", input: "what is 3 * 3?" });
    const final = await helper.finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe("The answer is 9.");
  });

  it("runs in the background: retrieved, then its stream resumed from starting_after after a restart of the runtime", async () => {
    const created = await client.responses.create({ model: "oa-slow", input: "hello", background: true });
    expect(created.status).toMatch(/^(queued|in_progress)$/);
    expect(created.background).toBe(true);
    expect((await client.responses.retrieve(created.id)).background).toBe(true);
    const live = await client.responses.retrieve(created.id, { stream: true });
    const before: ResponseStreamEvent[] = [];
    for await (const e of live) {
      before.push(e);
      if (before.filter((x) => x.type === "response.output_text.delta").length >= 3) break;
    }
    await mf.dispose();
    await start();
    const n = before.at(-1)!.sequence_number;
    const rest = await all(await client.responses.retrieve(created.id, { stream: true, starting_after: n }));
    expect(rest[0]!.sequence_number).toBe(n + 1);
    expect(rest.at(-1)!.type).toBe("response.completed");
    const whole = [...before, ...rest];
    expect(whole.map((e) => e.sequence_number)).toEqual(whole.map((_, i) => i));
    // The stream helper replays the whole stream to build its snapshot and emits what follows starting_after.
    const helper = client.responses.stream({ response_id: created.id, starting_after: n });
    expect(await all(helper)).toEqual(rest);
    const done = await client.responses.retrieve(created.id);
    expect(done).toMatchObject({ status: "completed", background: true });
    expect(done.output_text).toBe((await helper.finalResponse()).output_text);
  }, 120_000);

  it("cancels a running response (again: the same answer); cancelling a completed one is a ConflictError", async () => {
    const created = await client.responses.create({ model: "oa-slow", input: "hello", background: true });
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled).toMatchObject({ id: created.id, status: "cancelled" });
    expect(await client.responses.cancel(created.id)).toEqual(cancelled);
    expect((await client.responses.retrieve(created.id)).status).toBe("cancelled");
    // The stream helper takes the stream's end (response.failed, the response cancelled) as the final response.
    expect((await client.responses.stream({ response_id: created.id }).finalResponse()).status).toBe("cancelled");
    const done = await client.responses.create({ model: "oa-calc", input: "hello" });
    const refused = await client.responses.cancel(done.id).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.ConflictError);
    expect(refused).toMatchObject({ status: 409, code: "conflict", type: "invalid_request_error" });
  });

  it("chains three responses with previous_response_id in one conversation", async () => {
    const one = await client.responses.create({ model: "oa-calc", input: "what is 2 * 2?" });
    const two = await client.responses.create({ model: "oa-calc", input: "what is 3 * 3?", previous_response_id: one.id });
    const three = await client.responses.create({ model: "oa-calc", input: "what is 4 * 4?", previous_response_id: two.id });
    expect([one, two, three].map((r) => r.output_text)).toEqual(["The answer is 4.", "The answer is 9.", "The answer is 16."]);
    expect(two.previous_response_id).toBe(one.id);
    expect((await client.responses.retrieve(three.id)).previous_response_id).toBe(two.id);
    expect((await client.responses.retrieve(one.id)).previous_response_id).toBeNull();
    // One session: the ids share their session's digits.
    expect(new Set([one, two, three].map((r) => r.id.slice(5, 29))).size).toBe(1);
  });

  it("opens the version model names (agent@version, agent@label); an unknown version is a NotFoundError naming model", async () => {
    await callRuntime(mf, KEY, "PUT", "/v1/agents/oa-ver", { model: "demo:fast", instructions: "The first." });
    await callRuntime(mf, KEY, "PUT", "/v1/agents/oa-ver", { model: "demo:fast", instructions: "The second." });
    await callRuntime(mf, KEY, "PUT", "/v1/agents/oa-ver/labels/stable", { version: 1 });
    const versionOf = async (id: string) => (await callRuntime(mf, KEY, "GET", `/v1/sessions/ses_${id.slice(5, 29)}`)).agent_version;
    for (const [model, version] of [
      ["oa-ver@1", 1],
      ["oa-ver@stable", 1],
      ["oa-ver", 2],
    ] as const) {
      const r = await client.responses.create({ model, input: "hello" });
      expect(r).toMatchObject({ status: "completed", model: `oa-ver@${version}` });
      expect(await versionOf(r.id)).toBe(version);
    }
    // A conversation moved to another version: its next response names that one, the earlier keeps its own.
    const first = await client.responses.create({ model: "oa-ver@1", input: "hello" });
    await callRuntime(mf, KEY, "POST", `/v1/sessions/ses_${first.id.slice(5, 29)}/agent`, { version: 2 });
    const second = await client.responses.create({ model: "oa-ver", input: "again", previous_response_id: first.id });
    expect(second.model).toBe("oa-ver@2");
    expect((await client.responses.retrieve(first.id)).model).toBe("oa-ver@1");
    const replayed = await all(await client.responses.retrieve(first.id, { stream: true }));
    expect(replayed.flatMap((e) => ("response" in e ? [e.response.model] : []))).toContain("oa-ver@1");
    const missing = await client.responses.create({ model: "oa-ver@7", input: "hello" }).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ status: 404, param: "model", code: "not_found" });
  });

  it("takes an image and a file as data URLs, and lists them as input items", async () => {
    const png = await tinyPng();
    const url = `data:image/png;base64,${Buffer.from(png).toString("base64")}`;
    const response = await client.responses.create({
      model: "oa-calc",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this?" },
            { type: "input_image", image_url: url, detail: "auto" },
            { type: "input_file", filename: "notes.pdf", file_data: `data:application/pdf;base64,${Buffer.from("%PDF-1.4").toString("base64")}` },
          ],
        },
      ],
    });
    expect(response.output_text).toContain(`I got an image (image/png) of ${png.length} bytes`);
    const items = await client.responses.inputItems.list(response.id);
    // The input files as the OpenAI API lists them, each a session file by now.
    expect(items.data[0]).toMatchObject({
      type: "message",
      content: [
        { type: "input_text" },
        { type: "input_image", detail: "auto", file_id: expect.stringMatching(/^file_/), image_url: expect.stringContaining("/files/file_") },
        { type: "input_file", filename: "notes.pdf", file_id: expect.stringMatching(/^file_/), file_url: expect.stringContaining("/files/file_") },
      ],
    });
  });

  it("asks for approval with an mcp_approval_request, answered by an mcp_approval_response", async () => {
    const asked = await client.responses.create({ model: "oa-careful", input: "what is 6 * 7?" });
    expect(asked).toMatchObject({ status: "incomplete", incomplete_details: { reason: "approval_required" } });
    const request = asked.output.find((i) => i.type === "mcp_approval_request");
    expect(request).toMatchObject({ name: "calculator", arguments: JSON.stringify({ expression: "6 * 7" }) });
    const approved = await client.responses.create({
      model: "oa-careful",
      previous_response_id: asked.id,
      input: [{ type: "mcp_approval_response", approval_request_id: request!.id, approve: true }],
    });
    expect(approved.status).toBe("completed");
    expect(approved.previous_response_id).toBe(asked.id);
    expect(approved.output_text).toBe("The answer is 42.");
    expect((await client.responses.retrieve(approved.id)).previous_response_id).toBe(asked.id);
  });

  it("asks a question with a function_call, answered by a function_call_output", async () => {
    const asked = await client.responses.create({ model: "oa-calc", input: "ask me: which size? [S|M|L]" });
    expect(asked).toMatchObject({ status: "incomplete", incomplete_details: { reason: "user_input_required" } });
    const call = asked.output.find((i) => i.type === "function_call");
    expect(call).toMatchObject({ name: "ask_user" });
    const answered = await client.responses.create({
      model: "oa-calc",
      previous_response_id: asked.id,
      input: [{ type: "function_call_output", call_id: call!.call_id, output: "M" }],
    });
    expect(answered.output_text).toBe("You answered: M");
  });

  it("cancels a response that waits for a person: its turn ends", async () => {
    const asked = await client.responses.create({ model: "oa-careful", input: "what is 5 * 5?" });
    expect(asked.status).toBe("incomplete");
    const cancelled = await client.responses.cancel(asked.id);
    expect(cancelled).toMatchObject({ id: asked.id, status: "cancelled" });
    const retried = await client.responses
      .create({
        model: "oa-careful",
        previous_response_id: asked.id,
        input: [{ type: "mcp_approval_response", approval_request_id: asked.output.find((i) => i.type === "mcp_approval_request")!.id, approve: true }],
      })
      .catch((err: unknown) => err);
    expect(retried).toBeInstanceOf(OpenAI.APIError);
  });

  it("caps each model call of the turn at max_output_tokens: an answer cut there is incomplete", async () => {
    const whole = await client.responses.create({ model: "oa-calc", input: "tell me something long enough to be cut" });
    const capped = await client.responses.create({ model: "oa-calc", input: "tell me something long enough to be cut", max_output_tokens: 16 });
    expect(capped).toMatchObject({ max_output_tokens: 16, status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    expect(whole.status).toBe("completed");
    expect(whole.output_text.length).toBeGreaterThan(64);
    expect(capped.output_text).toBe(whole.output_text.slice(0, 64));
    expect(capped.usage!.output_tokens).toBeLessThanOrEqual(16);
  });

  it("refuses in the Responses error shape, which the package reads as APIError with code and param", async () => {
    const unknown = await client.responses.create({ model: "no-such-agent", input: "hi" }).catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toMatchObject({ status: 404, param: "model", code: "not_found" });
    const bad = await client.responses
      .create({ model: "oa-calc", input: [{ type: "computer_call_output", call_id: "x", output: { type: "computer_screenshot" } }] })
      .catch((err: unknown) => err);
    expect(bad).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(bad).toMatchObject({ status: 422, param: "input.0.type", code: "validation_failed" });
    expect((bad as Error).message).toContain("input.0.type");
  });
});
