// The Open Responses API (docs/guides/open-responses.md): OpenAI's Responses API over this runtime's sessions,
// so any OpenAI client talks to an agent. A response is a turn (or, after a pause for a person, the rest of
// one); `previous_response_id` continues its session. Errors come in the Responses shape, not the envelope.
import { z } from "zod";
import { intQuery } from "../strict-values";
import { json, jsonBody, operation } from "./operation";

/** Fields OpenAI clients send that an agent decides for itself (its model's settings are its configuration): taken, not used. */
const IGNORED_NOTE = "Taken and not used: the agent's configuration decides";
const IGNORED = ["temperature", "top_p", "tool_choice", "parallel_tool_calls", "truncation", "user", "include", "text", "reasoning", "service_tier"] as const;

export const ResponsesRequest = z
  .strictObject({
    model: z.string().min(1).max(200).meta({
      description:
        "The registered agent that answers: `name`, `name@<version>` or `name@<label>` (for a new conversation; with previous_response_id, the conversation's agent, and the version it runs when one is named)",
    }),
    input: z
      .union([
        z.string().min(1, "must not be empty"),
        z
          .array(z.looseObject({ type: z.string().optional() }))
          .min(1, "must not be empty")
          .max(20),
      ])
      .meta({ description: "Text, or input items: messages (input_text, input_image, input_file), mcp_approval_response, function_call_output" }),
    instructions: z.string().max(20_000).optional().meta({ description: "Added before this response's input (the agent's own instructions stay)" }),
    previous_response_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: "Continues that response's conversation (its session); absent: a new one" }),
    metadata: z
      .record(z.string().max(64, "keys must be at most 64 characters"), z.string().max(512, "values must be at most 512 characters"))
      .refine((m) => Object.keys(m).length <= 16, { message: "must hold at most 16 pairs" })
      .optional()
      .meta({ description: "Up to 16 pairs of text (keys up to 64 characters, values up to 512), kept with the response and returned on it" }),
    max_output_tokens: z.int().min(16).max(1_000_000).optional().meta({
      description:
        "The most tokens each model call of this response's turn writes (the agent's max_tokens when lower); an answer cut there ends incomplete (max_output_tokens)",
    }),
    stream: z.boolean().optional().meta({ description: "Answer the response's events as Server-Sent Events, live until it ends" }),
    background: z.boolean().optional().meta({ description: "Answer at once (queued or in_progress); the turn runs on" }),
    store: z.literal(true).optional().meta({ description: "Every response is stored (the session's log keeps it)" }),
    tools: z
      .array(z.unknown())
      .max(0, "must be empty: an agent's tools are its configuration")
      .optional()
      .meta({ description: "Must be empty: an agent's tools are its configuration" }),
    ...Object.fromEntries(IGNORED.map((f) => [f, z.unknown().optional().meta({ description: IGNORED_NOTE })])),
  })
  .meta({ id: "ResponsesRequest" });
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

const ResponseObject = z
  .looseObject({
    id: z.string(),
    object: z.literal("response"),
    status: z.enum(["queued", "in_progress", "completed", "failed", "incomplete", "cancelled"]),
    output: z.array(z.looseObject({ type: z.string() })),
  })
  .meta({ id: "Response" });

/** The Responses error shape every failing request of these routes answers. */
export const ResponsesError = z
  .object({ error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string() }) })
  .meta({ id: "ResponsesError" });

const ResponseId = z.object({ response_id: z.string().meta({ example: "resp_0123456789abcdef0123456789abcdef0123456789abcdef" }) });
/** A response's object, or with `stream` its Server-Sent Events. */
const objectOrStream = (description: string) => ({ description, content: { "application/json": ResponseObject, "text/event-stream": z.string() } });

export const createResponse = operation({
  method: "post",
  path: "/v1/responses",
  operationId: "createResponse",
  summary:
    "Creates a response: the input becomes a turn of a new session of the agent `model`, or of `previous_response_id`'s session; approvals and answers continue its paused turn. Waits for the response's end unless `background`; `stream` answers its events",
  permission: "session.submit",
  rateLimit: "turn",
  body: jsonBody(ResponsesRequest),
  responses: { 200: objectOrStream("The response (once it ends, unless background), or its events") },
  errors: [404, 409, 422],
  custom: true,
});

export const getResponse = operation({
  method: "get",
  path: "/v1/responses/{response_id}",
  operationId: "getResponse",
  summary: "A response as the log holds it now; with `stream=true` its events after `starting_after`, then live until it ends",
  permission: "session.read",
  rateLimit: "request",
  queryCredential: "event-stream",
  params: ResponseId,
  query: z.object({
    stream: z.enum(["true", "false"]).optional(),
    starting_after: intQuery({ min: 0, max: Number.MAX_SAFE_INTEGER })
      .optional()
      .meta({ description: "With stream=true: resume after the event of this sequence_number" }),
  }),
  responses: { 200: objectOrStream("The response, or its events") },
  errors: [404, 422],
  custom: true,
});

export const cancelResponse = operation({
  method: "post",
  path: "/v1/responses/{response_id}/cancel",
  operationId: "cancelResponse",
  summary: "Cancels the response's turn (running, queued or waiting for a person); a response that ended is 409",
  permission: "session.interrupt",
  rateLimit: "request",
  params: ResponseId,
  responses: { 200: json(ResponseObject, "The cancelled response") },
  errors: [404, 409],
  custom: true,
});

export const deleteResponse = operation({
  method: "delete",
  path: "/v1/responses/{response_id}",
  operationId: "deleteResponse",
  summary: "Erases the response's conversation: its session's log is append-only, so every response of the chain goes with it",
  permission: "session.delete",
  rateLimit: "request",
  params: ResponseId,
  responses: { 200: json(z.object({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) }), "Deleted") },
  errors: [404],
  custom: true,
});

export const listInputItems = operation({
  method: "get",
  path: "/v1/responses/{response_id}/input_items",
  operationId: "listInputItems",
  summary: "The input items the response was given: its turn's input, or the approvals and answers that continued it",
  permission: "session.read",
  rateLimit: "request",
  params: ResponseId,
  query: z.object({
    limit: intQuery({ min: 1, max: 100 }).optional(),
    order: z.enum(["asc", "desc"]).optional(),
    after: z.string().min(1).max(200).optional().meta({ description: "The page begins after the item of this id" }),
  }),
  responses: {
    200: json(
      z.object({
        object: z.literal("list"),
        data: z.array(z.looseObject({ type: z.string(), id: z.string() })),
        first_id: z.string().nullable(),
        last_id: z.string().nullable(),
        has_more: z.boolean(),
      }),
      "A page of input items",
    ),
  },
  errors: [404, 422],
  custom: true,
});
