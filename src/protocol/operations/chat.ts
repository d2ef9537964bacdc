// The AI SDK UI message stream protocol (docs/guides/use-chat.md): what an unmodified `useChat` with `DefaultChatTransport`
// sends and reads.
import { z } from "zod";
import { DebounceMs, OnBusy } from "../busy";
import { intQuery } from "../strict-values";
import { json, jsonBody, operation, Sid } from "./operation";

const PART_TYPES = new Set(["text", "reasoning", "file", "source-url", "source-document", "step-start", "dynamic-tool"]);
const isPartType = (type: string) => PART_TYPES.has(type) || type.startsWith("tool-") || type.startsWith("data-");

const UiPart = z.looseObject({ type: z.string().refine(isPartType, "is not a UI message part type") });
const UiMessage = z.looseObject({
  id: z.string().min(1, "must not be empty").max(128, "must be at most 128 characters"),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(UiPart),
});

/** The body a `DefaultChatTransport` POSTs (`{id, messages, trigger, messageId?, ...body extras}`). */
export const ChatBody = z
  .looseObject({
    id: z.string().min(1, "must not be empty").max(200).meta({ description: "The session id (useChat's chat id)" }),
    messages: z.array(UiMessage).min(1, "must hold at least one message"),
    trigger: z.enum(["submit-message", "regenerate-message"]),
    messageId: z.string().min(1).optional(),
    agent: z.string().min(1).optional().meta({ description: "A body extra: the registered agent of a new session, when `id` names no session" }),
    on_busy: OnBusy.optional().meta({ description: "A body extra: what to do when a turn is running; absent: the agent's chat_on_busy" }),
    debounce_ms: DebounceMs.optional(),
  })
  .meta({ id: "ChatRequest" });
export type ChatBody = z.infer<typeof ChatBody>;

const uiStream = (description: string) => ({ description, content: { "text/event-stream": z.string() } });

export const chat = operation({
  method: "post",
  path: "/v1/chat",
  operationId: "chat",
  summary:
    "AI SDK chat (DefaultChatTransport): the last user message becomes a turn (its id is the idempotency key), or the answered approvals of the assistant message `messageId` are decided; the answer is the turn's UI message stream",
  permission: "session.submit",
  rateLimit: "turn",
  body: jsonBody(ChatBody),
  responses: { 200: uiStream("The UI message stream (x-vercel-ai-ui-message-stream: v1), until the turn ends or waits for approvals") },
  errors: [404, 409, 422],
  custom: true,
});

export const resumeChat = operation({
  method: "get",
  path: "/v1/chat/{sid}/stream",
  operationId: "resumeChat",
  summary: "Resume (DefaultChatTransport.reconnectToStream): the running turn's UI message stream from its start, then live",
  permission: "session.read",
  rateLimit: "request",
  queryCredential: "always",
  params: z.object({ sid: z.string() }),
  responses: {
    200: uiStream("The running turn replayed from its start, then live"),
    204: { description: "No turn is running, or it waits for an approval" },
  },
  errors: [404],
  custom: true,
});

export const getChatMessages = operation({
  method: "get",
  path: "/v1/sessions/{sid}/messages",
  operationId: "getChatMessages",
  summary:
    "The conversation as AI SDK UIMessage[] (useChat's initial messages), pending approvals included; with `limit` (and `before`) a page of it: the newest `limit` messages (before the message `before`), oldest first",
  permission: "session.read",
  rateLimit: "request",
  params: Sid,
  query: z.object({
    limit: intQuery({ min: 1, max: 500 })
      .optional()
      .meta({ description: "A page: at most this many messages (1-500), the newest; absent: the whole conversation" }),
    before: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: "With limit: the page ends before the message of this id (the first message of the page read before)" }),
  }),
  responses: { 200: json(z.array(UiMessage), "UIMessage[]") },
  errors: [404, 422],
  session: true,
});
