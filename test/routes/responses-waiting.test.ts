// A Responses conversation whose turn waits for a person (docs/guides/open-responses.md, "Approvals and
// questions"): the request that answers it is checked whole before anything is recorded, and a new input
// there is refused rather than queued behind a pause nobody may ever answer.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createAgent, events } from "../support/api";
import { gateURL, releaseGate, uniqueId, waitForGate } from "../support/fake-model";

const create = (body: Record<string, unknown>) => api("POST", "/v1/responses", body);
const approval = (request: string, approve = true) => ({ type: "mcp_approval_response", approval_request_id: request, approve });
/** Approves `request` of the conversation of response `id`, and expects the response to complete. */
async function approve(agent: string, id: string, request: string) {
  const approved = await create({ model: agent, previous_response_id: id, input: [approval(request)] });
  expect(approved.body.status, JSON.stringify(approved.body)).toBe("completed");
  return approved.body.id as string;
}

function expectError(res: { status: number; body: any }, status: number, param: string | null) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: { message: expect.any(String), type: "invalid_request_error", param, code: expect.any(String) } });
}

/** A response of a new conversation paused on its calculator call's approval. */
async function paused(agent: string) {
  await createAgent({ name: agent, model: "demo:fast", tools: ["calculator", "ask_user"], hitl_tools: ["calculator"] });
  const asked = await create({ model: agent, input: "what is 6 * 7?" });
  expect(asked.body, JSON.stringify(asked.body)).toMatchObject({ status: "incomplete", incomplete_details: { reason: "approval_required" } });
  const request = asked.body.output.find((i: any) => i.type === "mcp_approval_request");
  return { id: asked.body.id as string, request: request.id as string, sid: `ses_${asked.body.id.slice(5, 29)}` };
}

/** A paused conversation of `agent`, its log's length, and the answer to a request approving it and sending `second` too. */
async function approvingWith(agent: string, second: (request: string) => Record<string, unknown>) {
  const { id, request, sid } = await paused(agent);
  const before = (await events(sid)).length;
  const res = await create({ model: agent, previous_response_id: id, input: [approval(request), second(request)] });
  return { id, request, sid, before, res };
}

describe("a conversation waiting for a person", () => {
  it("refuses two answers to one approval request in one request, naming the second, and records neither", async () => {
    const { id, request, sid, before, res: twice } = await approvingWith("resp-wait-twice", (request) => approval(request, false));
    expectError(twice, 422, "input.1.approval_request_id");
    expect(twice.body.error.message).toContain("input.0");
    expect((await events(sid)).length).toBe(before);
    // The request still waits, and one answer continues it.
    await approve("resp-wait-twice", id, request);
  });

  it("names the item whose approval request or question nobody waits for, and records nothing", async () => {
    const { id, sid, before, res: unknown } = await approvingWith("resp-wait-unknown", () => approval("act_nope"));
    expectError(unknown, 409, "input.1.approval_request_id");
    const question = await create({
      model: "resp-wait-unknown",
      previous_response_id: id,
      input: [{ type: "function_call_output", call_id: "call_nope", output: "M" }],
    });
    expectError(question, 409, "input.0.call_id");
    expect((await events(sid)).length).toBe(before);
  });

  it("refuses a new input while the turn waits (a request would wait with it), and takes it once answered", async () => {
    const { id, request, sid } = await paused("resp-wait-input");
    const before = (await events(sid)).length;
    for (const extra of [{}, { background: true }, { stream: true }]) {
      const res = await create({ model: "resp-wait-input", previous_response_id: id, input: "something else", ...extra });
      expectError(res, 409, "input");
      expect(res.body.error.message).toContain(request);
    }
    expect((await events(sid)).length).toBe(before);
    const approved = await approve("resp-wait-input", id, request);
    const next = await create({ model: "resp-wait-input", previous_response_id: approved, input: "hello" });
    expect(next.body.status, JSON.stringify(next.body)).toBe("completed");
  });

  it("decides in the session, as the input is queued: a turn that began waiting while the input's file was fetched refuses it", async () => {
    const agent = "resp-wait-race";
    await createAgent({ name: agent, model: "demo:fast", tools: ["calculator"], hitl_tools: ["calculator"] });
    const first = await create({ model: agent, input: "hello" });
    expect(first.body.status, JSON.stringify(first.body)).toBe("completed");
    const sid = `ses_${first.body.id.slice(5, 29)}`;
    // Nothing waits yet when this input reaches the session; its file is fetched (held at the gate) before it is queued.
    const gate = uniqueId("resp-wait-file");
    const content = [
      { type: "input_text", text: "and this" },
      { type: "input_file", filename: "notes.json", file_url: gateURL(gate) },
    ];
    const late = create({ model: agent, previous_response_id: first.body.id, background: true, input: [{ role: "user", content }] });
    await waitForGate(gate, (s) => s.held === 1, "the input's file was never fetched");
    // Meanwhile another input starts a turn that waits for its calculator call's approval.
    const asked = await create({ model: agent, previous_response_id: first.body.id, input: "what is 6 * 7?" });
    expect(asked.body, JSON.stringify(asked.body)).toMatchObject({ status: "incomplete", incomplete_details: { reason: "approval_required" } });
    const request = asked.body.output.find((i: any) => i.type === "mcp_approval_request").id as string;
    const submitted = (await events(sid)).filter((e) => e.type === "turn.submitted").length;
    expect((await releaseGate(gate, { notes: "some" })).delivered).toBe(1);
    const res = await late;
    expectError(res, 409, "input");
    expect(res.body.error.message).toContain(request);
    expect((await events(sid)).filter((e) => e.type === "turn.submitted").length).toBe(submitted);
    // The file stored for the refused input is forgotten with it.
    expect((await api("GET", `/v1/sessions/${sid}/files`)).body.files).toEqual([]);
    expect((await env.BLOBS.list({ prefix: `sessions/${sid}/` })).objects).toEqual([]);
    // The waiting turn goes on once answered.
    await approve(agent, asked.body.id, request);
  });
});
