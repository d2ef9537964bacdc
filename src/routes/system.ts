// Unauthenticated routes: health check.
import { createRoute, z } from "@hono/zod-openapi";
import { router } from "./http";

export const system = router().openapi(
  createRoute({
    method: "get",
    path: "/healthz",
    summary: "Liveness",
    security: [],
    responses: { 200: { description: "OK", content: { "application/json": { schema: z.object({ ok: z.literal(true) }) } } } },
  }),
  (c) => c.json({ ok: true as const }, 200),
);
