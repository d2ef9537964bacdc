// Unauthenticated routes: health check and the event catalog.
import { createRoute, z } from "@hono/zod-openapi";
import { eventCatalogSchema } from "../protocol/events-doc";
import { router } from "./http";

export const system = router()
  .openapi(
    createRoute({
      method: "get",
      path: "/healthz",
      operationId: "health",
      summary: "Liveness",
      security: [],
      responses: { 200: { description: "OK", content: { "application/json": { schema: z.object({ ok: z.literal(true) }) } } } },
    }),
    (c) => c.json({ ok: true as const }, 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/events/schema",
      operationId: "getEventSchema",
      summary: "The event catalog as JSON Schema: the envelope, and each event type's payload (no key needed)",
      security: [],
      responses: { 200: { description: "JSON Schema (draft 2020-12)", content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } } },
    }),
    (c) => c.json(eventCatalogSchema(), 200),
  );
