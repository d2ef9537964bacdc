// docs/reference/responses.md, generated from the Open Responses request schema (src/protocol/operations/responses.ts)
// and the stream fold's event names (src/views/responses-stream.ts); the meaning of each event, the events-to-items
// table and where the runtime differs from OpenAI's Responses types are written here, beside them.
import type { z } from "zod";
import { ResponsesRequest } from "../protocol/operations/responses";
import { cell, generatedNote } from "../protocol/schema-markdown";
import { STREAM_EVENTS, type StreamEventType } from "../views/responses-stream";

const EVENT_MEANINGS: Record<StreamEventType, string> = {
  "response.created": "The first event: the response as it begins (`queued` or `in_progress`).",
  "response.queued": "Right after `response.created` when the turn waits behind another of its session.",
  "response.in_progress": "The turn runs (right after `response.created`, or when a queued turn starts).",
  "response.output_item.added": "An output item begins (a `message` before its text; other items are added whole).",
  "response.content_part.added": "The `output_text` part of a message begins.",
  "response.output_text.delta": "Text of the agent's answer, as the model writes it.",
  "response.output_text.done": "A message's whole text.",
  "response.content_part.done": "The `output_text` part is whole.",
  "response.function_call_arguments.done": "A `function_call` item's arguments (whole: the runtime sends no argument deltas).",
  "response.output_item.done": "An output item is whole.",
  "response.completed": "The end: the turn completed; `usage` is set.",
  "response.incomplete":
    "The end: the turn waits for a person (`approval_required`, `user_input_required`), or the answer stopped at the output cap (`max_output_tokens`).",
  "response.failed": "The end: the turn failed (`error` says why), or was cancelled (the response's `status` is `cancelled`, `error` null).",
  error: "The stream itself failed (a browser token expired): numbered as the last event sent, so resuming after it loses nothing.",
};

const EVENTS_TO_ITEMS: [string, string][] = [
  [
    "the first event of the response (`turn.submitted`, or the first decision that continues a paused turn)",
    "`response.created`, then `response.in_progress` (`response.queued` when the turn waits)",
  ],
  ["`turn.started` of a queued turn", "`response.in_progress`"],
  ["`model.delta` (the agent's, not a sub-agent's)", "a `message` item: `output_item.added`, `content_part.added`, `output_text.delta`"],
  ["`model.completed` of the agent's executor call", "`output_text.done`, `content_part.done`, `output_item.done`"],
  ["`reasoning.summary`", "a `reasoning` item"],
  ["`tool.started`", "a `function_call` item (with `function_call_arguments.done`)"],
  ["`tool.result`", "a `function_call_output` item (the runtime ran the call: nothing is for the client to do); files it returned carry their absolute `url`"],
  ["a pause on `action.required` (approval, question)", "`mcp_approval_request` or `function_call` (`ask_user`) items, then `response.incomplete`"],
  [
    "`turn.completed`",
    "the answer as a message when it was not streamed, `usage`, `response.completed` (`response.incomplete` when the last model call stopped at its cap)",
  ],
  ["`turn.failed`", "`response.failed` with `error` (`code` is the turn's error code)"],
  ["`turn.cancelled` (also while the turn waits for a person)", "`response.failed`, the response `cancelled`"],
];

const DIFFERENCES = [
  "`error.code` is the turn's error code (`model_error`, `budget_exceeded`, ... as in [events](events.md)), not one of OpenAI's.",
  "`incomplete_details.reason` may also be `approval_required` or `user_input_required`: the turn waits for a person.",
  "`usage` is null until the response ends, and `input_tokens_details` has `cached_tokens` only (no cache writes).",
  "A cancelled response's stream ends with `response.failed` (Responses streams have no cancellation event).",
  "`output` holds the agent's own tool calls with their results (`function_call_output`): the runtime ran them.",
  "`model` names the agent and the version that answered (`agent@3`; the bare name for an agent of no version), whatever the request named.",
];

/** A field's type in a few words, from its schema's JSON Schema type. */
function typeOf(schema: z.ZodType): string {
  const json = schema.toJSONSchema() as { type?: string | string[]; anyOf?: { type?: string }[] };
  const types = json.anyOf ? json.anyOf.map((a) => a.type ?? "any") : [json.type ?? "any"].flat();
  return [...new Set(types)].join(" \\| ");
}

export function responsesMarkdown(): string {
  const fields = Object.entries(ResponsesRequest.shape).map(([name, schema]) => {
    const s = schema as z.ZodType;
    if (!s.description) throw new Error(`ResponsesRequest.${name} has no description`);
    return `| \`${name}\` | ${typeOf(s)} | ${cell(s.description)} |`;
  });
  return [
    "# Open Responses",
    "",
    generatedNote("src/protocol/operations/responses.ts and src/views/responses-stream.ts"),
    "",
    "`POST /v1/responses` and its routes ([the guide](../guides/open-responses.md)): the request's fields, the",
    "stream's events, and how the turn's events become output items.",
    "",
    "## Request",
    "",
    "| field | type | meaning |",
    "| --- | --- | --- |",
    ...fields,
    "",
    "## Stream events",
    "",
    "Each event has `type` (also its SSE `event:` name), `sequence_number` (from 0, also its SSE `id:`), and the",
    "fields Responses gives it.",
    "",
    "| event | meaning |",
    "| --- | --- |",
    ...STREAM_EVENTS.map((e) => `| \`${e}\` | ${cell(EVENT_MEANINGS[e])} |`),
    "",
    "## Events to items",
    "",
    "The response's stream is a fold of its turn's events (src/views/responses-stream.ts); the response object",
    "is the same fold's result.",
    "",
    "| the turn's events | the Responses stream |",
    "| --- | --- |",
    ...EVENTS_TO_ITEMS.map(([from, to]) => `| ${cell(from)} | ${cell(to)} |`),
    "",
    "## Where OpenAI's types say less",
    "",
    "The `openai` package reads every response and event of the runtime (test/node/responses-openai.test.ts checks",
    "the shapes against its types); these fields carry more than its types name:",
    "",
    ...DIFFERENCES.map((d) => `- ${d}`),
    "",
  ].join("\n");
}
