// Event delivery (docs/reference/api.md, docs/reference/events.md): JSON pages, SSE, the WebSocket, and spilled outputs.
import { z } from "zod";
import { parseCursor } from "../cursor";
import { type RuntimeEvent, RuntimeEventSchema } from "../events";
import type { JsonText } from "../session-operations";
import { intQuery } from "../strict-values";
import { answers, operation, Sid, sidWith } from "./operation";

const cursor = z
  .string()
  .refine((raw) => parseCursor(raw) !== null, "must be a plain non-negative decimal integer")
  .transform((raw) => parseCursor(raw)!);

export const EventsPage = z.object({ events: z.array(RuntimeEventSchema), next_after: z.number(), has_more: z.boolean() });
/** A page of events as the session writes it (its events typed as stored). */
export type EventsPageBody = Omit<z.input<typeof EventsPage>, "events"> & { events: RuntimeEvent[] };

export const getEvents = operation({
  method: "get",
  path: "/v1/sessions/{sid}/events",
  operationId: "getEvents",
  summary: "Events after a cursor: a JSON page, or with Accept: text/event-stream an SSE stream (replay, then live)",
  permission: "session.read",
  rateLimit: "request",
  queryCredential: "event-stream",
  params: Sid,
  query: z.object({
    after: cursor.optional().meta({ description: "Return events with sequence > after (default 0, or Last-Event-ID for SSE)" }),
    limit: intQuery({ min: 1, max: 1000 }).optional().meta({ description: "JSON page size (an integer 1-1000), default 100" }),
    access_token: z.string().optional().meta({ description: "API key, for browsers (SSE only)" }),
  }),
  responses: {
    200: {
      description: "Events in sequence order",
      content: { "application/json": EventsPage, "text/event-stream": z.string() },
    },
  },
  errors: [404, 422],
  session: true,
  custom: true,
  answers: answers<JsonText<EventsPageBody>>(),
});

export const openWebSocket = operation({
  method: "get",
  path: "/v1/sessions/{sid}/ws",
  operationId: "openWebSocket",
  summary: "WebSocket: every event after the cursor, then live; accepts command frames",
  permission: "session.read",
  rateLimit: "request",
  queryCredential: "always",
  params: Sid,
  query: z.object({
    after: cursor.optional(),
    channel: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,128}$/, "must be 1-128 characters of A-Z a-z 0-9 _ . : -")
      .optional(),
    frames: z.enum(["event", "batch"]).optional().meta({
      description:
        "event (default): one event envelope per frame; batch: the events committed together (and each page of a replay) as one frame, a JSON array of envelopes",
    }),
    access_token: z.string().optional(),
  }),
  responses: { 101: { description: "Switching protocols" }, 426: { description: "Not a WebSocket upgrade" } },
  errors: [404, 422],
});

export const getArtifact = operation({
  method: "get",
  path: "/v1/sessions/{sid}/artifacts/{artifact_id}",
  operationId: "getArtifact",
  summary: "The bytes of a spilled output (a tool result over max_tool_result_bytes)",
  permission: "session.read",
  rateLimit: "request",
  params: sidWith("artifact_id"),
  responses: { 200: { description: "The artifact, with its content type", content: { "application/octet-stream": z.string() } } },
  errors: [404],
});
