// The Open Responses API (docs/guides/open-responses.md) through its public surface, with plain fetch as an
// OpenAI client sends it: create, stream, background then retrieve and resume, cancel, chains, approvals and
// questions answered with input items, and refusals in the Responses error shape that change nothing.
import { describe, expect, it } from "vitest";
import { api, apiAs, createAgent, events } from "../support/api";
import { until } from "../support/chat-client";
import { script, toolURL, uniqueId } from "../support/fake-model";
import { tinyPng } from "../support/tiny-files";

type Sse = { event: string; data: any }[];

/** The events of a Responses SSE body. */
function sse(text: string | null): Sse {
  return (text ?? "")
    .split("\n\n")
    .filter((block) => block.startsWith("event: "))
    .map((block) => {
      const [head, data] = block.split("\n");
      return { event: head!.slice(7), data: JSON.parse(data!.slice(6)) };
    });
}

const create = (body: Record<string, unknown>) => api("POST", "/v1/responses", body);

/** The refusal is in the Responses error shape, with the status and the field named. */
function expectError(res: { status: number; body: any }, status: number, param: string | null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: { message: expect.any(String), type: expect.any(String), param, code: expect.any(String) } });
}

describe("POST /v1/responses", () => {
  it("answers the completed response of a new conversation", async () => {
    await createAgent({ name: "resp-basic", model: "demo:fast", tools: ["calculator"] });
    const res = await create({ model: "resp-basic", input: "what is 6 * 7?" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ object: "response", status: "completed", model: "resp-basic@1", error: null, background: false });
    expect(res.body.id).toMatch(/^resp_[0-9a-f]{48}$/);
    const types = res.body.output.map((i: any) => i.type);
    expect(types).toEqual(["function_call", "function_call_output", "message"]);
    expect(res.body.output[0]).toMatchObject({ name: "calculator", arguments: JSON.stringify({ expression: "6 * 7" }) });
    expect(res.body.output[2].content[0].text).toBe("The answer is 42.");
    expect(res.body.usage).toMatchObject({ input_tokens: expect.any(Number), input_tokens_details: { cached_tokens: expect.any(Number) } });
    const again = await api("GET", `/v1/responses/${res.body.id}`);
    expect(again.body).toMatchObject({ id: res.body.id, status: "completed", output: res.body.output, usage: res.body.usage });
    const items = await api("GET", `/v1/responses/${res.body.id}/input_items`);
    expect(items.body).toMatchObject({
      object: "list",
      has_more: false,
      data: [{ type: "message", role: "user", content: [{ type: "input_text", text: "what is 6 * 7?" }] }],
    });
  });

  it("streams the Responses events, numbered from 0 without a gap, ending with response.completed", async () => {
    await createAgent({ name: "resp-stream", model: "demo:fast" });
    const res = await create({ model: "resp-stream", input: "hello", stream: true });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const got = sse(res.body);
    expect(got.map((e) => e.data.sequence_number)).toEqual(got.map((_, i) => i));
    expect(got.every((e) => e.event === e.data.type)).toBe(true);
    expect(got[0]!.event).toBe("response.created");
    expect(got.at(-1)!.event).toBe("response.completed");
    const deltas = got
      .filter((e) => e.event === "response.output_text.delta")
      .map((e) => e.data.delta)
      .join("");
    expect(got.find((e) => e.event === "response.output_text.done")!.data.text).toBe(deltas);
    const id = got[0]!.data.response.id;
    // Resumed after any event, the rest is exactly what followed it.
    for (const n of [0, 3, got.length - 2]) {
      const resumed = sse((await api("GET", `/v1/responses/${id}?stream=true&starting_after=${n}`)).body);
      expect(resumed).toEqual(got.slice(n + 1));
    }
    expectError(await api("GET", `/v1/responses/${id}?stream=true&starting_after=${got.length}`), 422, "starting_after");
    // An EventSource reconnects with the last `id:` it read (the sequence_number) as Last-Event-ID, which wins.
    expect(res.body).toContain(`\nid: ${got.length - 1}\n`);
    const reconnected = await api("GET", `/v1/responses/${id}?stream=true&starting_after=0`, undefined, { "last-event-id": "4" });
    expect(sse(reconnected.body)).toEqual(got.slice(5));
    for (const bad of ["x", String(got.length)]) {
      expectError(await api("GET", `/v1/responses/${id}?stream=true`, undefined, { "last-event-id": bad }), 422, "Last-Event-ID");
    }
    expect(sse((await api("GET", `/v1/responses/${id}?stream=true&starting_after=${got.length - 1}`)).body)).toEqual([]);
  });
});

describe("background responses", () => {
  it("answer at once; the response is retrieved, and its stream resumed after any event", async () => {
    await createAgent({ name: "resp-bg", model: "demo:slow" });
    const res = await create({ model: "resp-bg", input: "hello", background: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: expect.stringMatching(/^(queued|in_progress)$/), background: true });
    const first = sse((await api("GET", `/v1/responses/${res.body.id}?stream=true`)).body);
    expect(first.at(-1)!.event).toBe("response.completed");
    const done = await api("GET", `/v1/responses/${res.body.id}`);
    expect(done.body).toEqual(first.at(-1)!.data.response);
    const rest = sse((await api("GET", `/v1/responses/${res.body.id}?stream=true&starting_after=5`)).body);
    expect(rest).toEqual(first.slice(6));
  }, 60_000);

  it("cancel ends a running response as cancelled (again: the same answer); a completed one is 409 and stays as it was", async () => {
    await createAgent({ name: "resp-cancel", model: "demo:slow" });
    const res = await create({ model: "resp-cancel", input: "hello", background: true });
    const cancelled = await api("POST", `/v1/responses/${res.body.id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({ id: res.body.id, status: "cancelled" });
    const stream = sse((await api("GET", `/v1/responses/${res.body.id}?stream=true`)).body);
    // Responses streams have no event of a cancellation: the end is response.failed, its response cancelled.
    expect(stream.at(-1)).toMatchObject({ event: "response.failed", data: { response: { status: "cancelled", error: null } } });
    expect(await api("POST", `/v1/responses/${res.body.id}/cancel`)).toMatchObject({ status: 200, body: cancelled.body });
    await createAgent({ name: "resp-done", model: "demo:fast" });
    const done = await create({ model: "resp-done", input: "hello" });
    const refused = await api("POST", `/v1/responses/${done.body.id}/cancel`);
    expectError(refused, 409, null);
    expect(refused.body.error.type).toBe("invalid_request_error");
    expect((await api("GET", `/v1/responses/${done.body.id}`)).body).toEqual(done.body);
  });

  it("a stream open while its response is cancelled ends with response.failed, the response cancelled", async () => {
    await createAgent({ name: "resp-cancel-live", model: "demo:slow" });
    const live = api("POST", "/v1/responses", { model: "resp-cancel-live", input: "hello", stream: true });
    let id = "";
    await until(async () => {
      const [row] = (await api("GET", "/v1/sessions?agent=resp-cancel-live")).body.sessions;
      const turns = row ? (await api("GET", `/v1/sessions/${row.session_id}`)).body.turns : [];
      if (turns[0]) id = `resp_${row.session_id.slice(4)}${turns[0].turn_id.slice(4)}`;
      return id !== "";
    }, "the streamed response's turn");
    expect((await api("POST", `/v1/responses/${id}/cancel`)).body.status).toBe("cancelled");
    const stream = sse((await live).body);
    expect(stream[0]).toMatchObject({ event: "response.created", data: { response: { id } } });
    expect(stream.at(-1)).toMatchObject({ event: "response.failed", data: { response: { id, status: "cancelled", error: null } } });
    expect(stream.filter((e) => /^response\.(completed|failed|incomplete)$/.test(e.event))).toHaveLength(1);
  });
});

describe("conversations", () => {
  it("chain three responses with previous_response_id in one session", async () => {
    await createAgent({ name: "resp-chain", model: "demo:fast" });
    const one = await create({ model: "resp-chain", input: "first" });
    const two = await create({ model: "resp-chain", input: "second", previous_response_id: one.body.id });
    const three = await create({ model: "resp-chain", input: "third", previous_response_id: two.body.id });
    for (const r of [one, two, three]) expect(r.body.status).toBe("completed");
    expect(three.body.previous_response_id).toBe(two.body.id);
    const sid = `ses_${one.body.id.slice(5, 29)}`;
    expect(two.body.id.slice(5, 29)).toBe(one.body.id.slice(5, 29));
    expect(three.body.id.slice(5, 29)).toBe(one.body.id.slice(5, 29));
    const inputs = (await events(sid)).filter((e) => e.type === "turn.submitted").map((e) => e.payload.input);
    expect(inputs).toEqual(["first", "second", "third"]);
  });

  it("item ids are unique across conversations and responses, and the same item has the same id however it is read", async () => {
    await createAgent({ name: "resp-ids", model: "demo:fast", tools: ["calculator"] });
    const ids = (r: { body: any }) => r.body.output.map((i: any) => i.id) as string[];
    const one = await create({ model: "resp-ids", input: "what is 6 * 7?" });
    const two = await create({ model: "resp-ids", input: "what is 6 * 7?" });
    const next = await create({ model: "resp-ids", input: "what is 6 * 7?", previous_response_id: one.body.id });
    for (const r of [one, two, next]) expect(r.body.output.map((i: any) => i.type)).toEqual(["function_call", "function_call_output", "message"]);
    const all = [...ids(one), ...ids(two), ...ids(next)];
    expect(new Set(all).size).toBe(all.length);
    expect(ids(one)[2]).toMatch(/^msg_[0-9a-f]+$/);
    const inputIds = async (r: { body: any }) => (await api("GET", `/v1/responses/${r.body.id}/input_items`)).body.data.map((i: any) => i.id);
    const inputs = [...(await inputIds(one)), ...(await inputIds(two)), ...(await inputIds(next))];
    expect(new Set(inputs).size).toBe(3);
    // Read again, as an object, a stream and the input items: the same ids.
    expect(ids(await api("GET", `/v1/responses/${one.body.id}`))).toEqual(ids(one));
    expect(await inputIds(one)).toEqual(await inputIds(one));
    const streamed = sse((await api("GET", `/v1/responses/${one.body.id}?stream=true`)).body);
    expect(streamed.filter((e) => e.event === "response.output_item.done").map((e) => e.data.item.id)).toEqual(ids(one));
    expect(new Set(streamed.flatMap((e) => (e.data.item_id ? [e.data.item_id] : [])))).toEqual(new Set(ids(one).filter((id) => id !== ids(one)[1])));
  });

  it("an approval is an mcp_approval_request (incomplete) answered by mcp_approval_response", async () => {
    await createAgent({ name: "resp-careful", model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] });
    const asked = await create({ model: "resp-careful", input: "what is 6 * 7?" });
    expect(asked.body).toMatchObject({ status: "incomplete", incomplete_details: { reason: "approval_required" } });
    const request = asked.body.output.find((i: any) => i.type === "mcp_approval_request");
    expect(request).toMatchObject({ name: "calculator", arguments: JSON.stringify({ expression: "6 * 7" }) });
    const approved = await create({
      model: "resp-careful",
      previous_response_id: asked.body.id,
      input: [{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }],
    });
    expect(approved.body.status, JSON.stringify(approved.body)).toBe("completed");
    expect(approved.body.output.map((i: any) => i.type)).toEqual(["function_call", "function_call_output", "message"]);
    expect(approved.body.output.at(-1).content[0].text).toBe("The answer is 42.");
    const items = (await api("GET", `/v1/responses/${approved.body.id}/input_items`)).body.data;
    expect(items).toMatchObject([{ type: "mcp_approval_response", approval_request_id: request.id, approve: true }]);
    // The first response still ends where the turn paused.
    expect((await api("GET", `/v1/responses/${asked.body.id}`)).body).toMatchObject({ status: "incomplete", output: asked.body.output });
  });

  it("an ask_user question is a function_call answered by function_call_output", async () => {
    await createAgent({ name: "resp-asker", model: "demo:fast", tools: ["ask_user"] });
    const asked = await create({ model: "resp-asker", input: "ask me: which size? [S|M|L]", stream: true });
    const got = sse(asked.body);
    expect(got.at(-1)).toMatchObject({ event: "response.incomplete", data: { response: { incomplete_details: { reason: "user_input_required" } } } });
    const response = got.at(-1)!.data.response;
    const call = response.output.find((i: any) => i.type === "function_call");
    expect(call).toMatchObject({ name: "ask_user" });
    expect(JSON.parse(call.arguments)).toMatchObject({ question: "Which size?" });
    const answered = await create({
      model: "resp-asker",
      previous_response_id: response.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "M" }],
    });
    expect(answered.body.status, JSON.stringify(answered.body)).toBe("completed");
    expect(answered.body.output[0]).toMatchObject({ type: "function_call_output", call_id: call.call_id });
    expect(answered.body.output.at(-1).type).toBe("message");
  });
});

describe("input items", () => {
  it("take an image as a data URL and files as file_data; the input items list them as the OpenAI API does", async () => {
    await createAgent({ name: "resp-image", model: "demo:fast" });
    const png = await tinyPng();
    const url = `data:image/png;base64,${btoa(String.fromCharCode(...png))}`;
    const data = (media: string, text: string) => `data:${media};base64,${btoa(text)}`;
    const res = await create({
      model: "resp-image",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this?" },
            { type: "input_image", image_url: url },
            { type: "input_file", filename: "notes.txt", file_data: data("text/plain", "some notes") },
            { type: "input_file", file_data: data("application/pdf", "%PDF-1.4 nothing") },
          ],
        },
      ],
    });
    expect(res.body.status, JSON.stringify(res.body)).toBe("completed");
    expect(res.body.output.at(-1).content[0].text).toContain(`I got an image (image/png) of ${png.length} bytes`);
    const sid = `ses_${res.body.id.slice(5, 29)}`;
    const [message] = (await api("GET", `/v1/responses/${res.body.id}/input_items`)).body.data;
    const [text, image, named, unnamed] = message.content;
    expect(text).toEqual({ type: "input_text", text: "what is this?" });
    // Each a session file by now: its id, and its download URL under the request's origin.
    const fileUrl = (f: any) => `https://runtime.test/v1/sessions/${sid}/files/${f.file_id}`;
    expect(image).toEqual({ type: "input_image", detail: "auto", file_id: expect.stringMatching(/^file_/), image_url: fileUrl(image) });
    expect(named).toEqual({ type: "input_file", file_id: expect.stringMatching(/^file_/), filename: "notes.txt", file_url: fileUrl(named) });
    // Sent without a name, it has none (the OpenAI API's filename is optional).
    expect(unnamed).toEqual({ type: "input_file", file_id: expect.stringMatching(/^file_/), file_url: fileUrl(unnamed) });
    expect((await api("GET", new URL(named.file_url).pathname)).body).toBe("some notes");
  });
});

describe("files", () => {
  it("a file a tool returned is in its function_call_output with an absolute URL under the request's origin", async () => {
    const id = uniqueId("resp-files");
    const files = [{ data: btoa("a,b\n1,2\n"), media_type: "text/csv", filename: "table.csv" }];
    await script(id, [{ tool_calls: [{ name: "make_files", arguments: { files } }] }, { text: "Here is the table." }]);
    await createAgent({ name: "resp-files", model: `openai-compatible:${id}`, http_tools: [{ name: "make_files", url: toolURL("files") }] });
    const res = await create({ model: "resp-files", input: "make a table" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const sid = `ses_${res.body.id.slice(5, 29)}`;
    const output = (r: any) => JSON.parse(r.output.find((i: any) => i.type === "function_call_output").output);
    const [file] = output(res.body).files;
    expect(file).toMatchObject({
      media_type: "text/csv",
      filename: "table.csv",
      url: expect.stringMatching(new RegExp(`^https://runtime\\.test/v1/sessions/${sid}/files/file_`)),
    });
    expect(file.url.endsWith(file.file_id)).toBe(true);
    expect((await api("GET", new URL(file.url).pathname)).body).toBe("a,b\n1,2\n");
    // Retrieved and streamed alike.
    expect(output((await api("GET", `/v1/responses/${res.body.id}`)).body).files[0].url).toBe(file.url);
    const streamed = sse((await api("GET", `/v1/responses/${res.body.id}?stream=true`)).body);
    const done = streamed.find((e) => e.event === "response.output_item.done" && e.data.item.type === "function_call_output");
    expect(JSON.parse(done!.data.item.output).files[0].url).toBe(file.url);
  });
});

describe("versions", () => {
  it("model agent@3 and agent@label open that version; an unknown version or label is a 404 naming model", async () => {
    await createAgent({ name: "resp-ver", model: "demo:fast", instructions: "The first." });
    await createAgent({ name: "resp-ver", model: "demo:fast", instructions: "The second." });
    expect((await api("PUT", "/v1/agents/resp-ver/labels/stable", { version: 1 })).status).toBe(200);
    /** The version the response's session runs (its id names the session). */
    const versionOf = async (id: string) => (await api("GET", `/v1/sessions/ses_${id.slice(5, 29)}`)).body.agent_version;
    const pinned = await create({ model: "resp-ver@1", input: "hello" });
    expect(pinned.status, JSON.stringify(pinned.body)).toBe(200);
    expect(pinned.body).toMatchObject({ status: "completed", model: "resp-ver@1" });
    expect(await versionOf(pinned.body.id)).toBe(1);
    expect(await versionOf((await create({ model: "resp-ver@stable", input: "hello" })).body.id)).toBe(1);
    expect(await versionOf((await create({ model: "resp-ver", input: "hello" })).body.id)).toBe(2);

    const before = (await api("GET", "/v1/sessions?agent=resp-ver")).body.sessions.length;
    expectError(await create({ model: "resp-ver@9", input: "hello" }), 404, "model");
    expectError(await create({ model: "resp-ver@canary", input: "hello" }), 404, "model");
    expectError(await create({ model: "nobody@1", input: "hello" }), 404, "model");
    // A conversation goes on with its agent; a version it names must be the one it runs.
    expectError(await create({ model: "resp-ver@2", input: "again", previous_response_id: pinned.body.id }), 422, "model");
    const next = await create({ model: "resp-ver@stable", input: "again", previous_response_id: pinned.body.id });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect((await create({ model: "resp-ver", input: "more", previous_response_id: next.body.id })).status).toBe(200);
    expect((await api("GET", "/v1/sessions?agent=resp-ver")).body.sessions.length).toBe(before);
  });
});

describe("refusals", () => {
  it("answer the Responses error shape, name the field, and change nothing", async () => {
    await createAgent({ name: "resp-bad", model: "demo:fast" });
    const before = (await api("GET", "/v1/sessions?limit=100")).body;
    expectError(await create({ model: "no-such-agent", input: "hi" }), 404, "model");
    expectError(await create({ model: "resp-bad", input: [{ type: "computer_call_output", call_id: "x" }] }), 422, "input.0.type");
    expectError(await create({ model: "resp-bad", input: [{ role: "assistant", content: "earlier" }] }), 422, "input.0.role");
    expectError(await create({ model: "resp-bad", input: "hi", tools: [{ type: "function", name: "f" }] }), 422, "tools");
    expectError(await create({ model: "resp-bad", input: [{ type: "function_call_output", call_id: "c", output: "x" }] }), 422, "previous_response_id");
    expectError(await create({ model: "resp-bad", input: "hi", previous_response_id: "resp_nope" }), 404, "previous_response_id");
    expectError(await api("GET", "/v1/responses/resp_nope"), 404, "response_id");
    expectError(await api("POST", "/v1/responses", "{not json"), 400, null);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    expectError(await create({ model: "resp-bad", input: "hi", metadata: many }), 422, "metadata");
    expectError(await create({ model: "resp-bad", input: "hi", metadata: { k: 1 } }), 422, "metadata.k");
    expectError(await create({ model: "resp-bad", input: "hi", max_output_tokens: 5 }), 422, "max_output_tokens");
    // Nothing to say (blanks only, no file) is no turn, whether text or input_text parts.
    expectError(await create({ model: "resp-bad", input: "   " }), 422, "input");
    expectError(await create({ model: "resp-bad", input: [{ role: "user", content: [{ type: "input_text", text: " \n" }] }] }), 422, "input");
    expect((await api("GET", "/v1/sessions?limit=100")).body).toEqual(before);
  });

  it("a file refused by the session is named as the request has it: its content part and field", async () => {
    await createAgent({ name: "resp-bad-file", model: "demo:fast" });
    const image = (image_url: string) => ({
      role: "user",
      content: [
        { type: "input_text", text: "see" },
        { type: "input_image", image_url },
      ],
    });
    const offList = await create({ model: "resp-bad-file", input: [image("http://not-allowed.example/x.png")] });
    expectError(offList, 422, "input.0.content.1.image_url");
    expect(offList.body.error.message).toBe("Validation failed: input.0.content.1.image_url: is not under TOOL_URL_ALLOWLIST");
    const notPng = await create({ model: "resp-bad-file", input: [{ role: "user", content: "hi" }, image("data:image/png;base64,AAAA")] });
    expectError(notPng, 422, "input.1.content.1");
    const file = { role: "user", content: [{ type: "input_file", file_data: "data:application/pdf;base64,A" }] };
    expectError(await create({ model: "resp-bad-file", input: [file] }), 422, "input.0.content.0.file_data");
    // The conversations the refused requests opened are gone: once a later one is listed (the index is written
    // off the request's path), it is the only one.
    const ok = await create({ model: "resp-bad-file", input: "hello" });
    const sessions = async () => (await api("GET", "/v1/sessions?agent=resp-bad-file")).body.sessions.map((s: any) => s.session_id);
    await until(async () => (await sessions()).length > 0, "a session listed");
    expect(await sessions()).toEqual([`ses_${ok.body.id.slice(5, 29)}`]);
  });

  it("a token reaches only its subject's responses", async () => {
    await createAgent({ name: "resp-tok", model: "demo:fast" });
    const mint = async (subject: string) => (await api("POST", "/v1/tokens", { subject, agent: "resp-tok", ttl_s: 600 })).body.token;
    const alice = await mint("alice");
    const bob = await mint("bob");
    const mine = await apiAs("POST", "/v1/responses", alice, { model: "resp-tok", input: "hello" });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect((await apiAs("GET", `/v1/responses/${mine.body.id}`, alice)).status).toBe(200);
    const sid = `ses_${mine.body.id.slice(5, 29)}`;
    const count = (await events(sid)).length;
    expectError(await apiAs("POST", "/v1/responses", bob, { model: "resp-tok", input: "mine now", previous_response_id: mine.body.id }), 403, null);
    expectError(await apiAs("GET", `/v1/responses/${mine.body.id}`, bob), 403, null);
    expectError(await apiAs("POST", `/v1/responses/${mine.body.id}/cancel`, bob), 403, null);
    expect((await events(sid)).length).toBe(count);
  });
});
