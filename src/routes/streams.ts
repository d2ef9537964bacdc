// Event delivery routes (SPEC §4, §5): JSON pages, SSE, and WebSocket. The session object serves the
// streams itself; these routes authenticate and forward.
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { EXPIRES_HEADER, GRANTS_HEADER, KEY_HASH_HEADER } from "../durable/session-streams";
import { artifactKey } from "../durable/turn-ports";
import { parseCursor } from "../protocol/cursor";
import { RuntimeEventSchema } from "../protocol/events";
import { ApiError, unwrap } from "../runtime/errors";
import { socketGrants } from "./auth";
import { type AppEnv, errorResponses, router, sessionStub } from "./http";

const Sid = z.object({ sid: z.string().openapi({ param: { name: "sid", in: "path" } }) });

/** The stream request as the session object gets it: with who is calling, what it may do, and until when. */
function toSession(c: Context<AppEnv>): Request {
  const forwarded = new Request(c.req.raw);
  const principal = c.get("principal");
  forwarded.headers.set(KEY_HASH_HEADER, c.get("keyHash"));
  forwarded.headers.set(GRANTS_HEADER, socketGrants(principal).join(","));
  if (principal.kind === "token" && principal.expires_at !== null) forwarded.headers.set(EXPIRES_HEADER, String(principal.expires_at));
  else forwarded.headers.delete(EXPIRES_HEADER);
  return forwarded;
}

const cursor = z
  .string()
  .refine((raw) => parseCursor(raw) !== null, "must be a plain non-negative decimal integer")
  .transform((raw) => parseCursor(raw)!);

export const streams = router()
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{sid}/events",
      operationId: "getEvents",
      summary: "Events after a cursor: a JSON page, or with Accept: text/event-stream an SSE stream (replay, then live)",
      request: {
        params: Sid,
        query: z.object({
          after: cursor.optional().openapi({ description: "Return events with sequence > after (default 0, or Last-Event-ID for SSE)" }),
          limit: z.coerce.number().int().min(1).max(1000).optional().openapi({ description: "JSON page size, default 100" }),
          access_token: z.string().optional().openapi({ description: "API key, for browsers (SSE only)" }),
        }),
      },
      responses: {
        200: {
          description: "Events in sequence order",
          content: {
            "application/json": { schema: z.object({ events: z.array(RuntimeEventSchema), next_after: z.number(), has_more: z.boolean() }) },
            "text/event-stream": { schema: z.string() },
          },
        },
        ...errorResponses(401, 404, 422),
      },
    }),
    async (c) => {
      const { sid } = c.req.valid("param");
      const { after, limit } = c.req.valid("query");
      const stub = sessionStub(c.env, sid);
      if ((c.req.header("accept") ?? "").includes("text/event-stream")) return stub.fetch(toSession(c));
      const body = unwrap(await stub.eventsPage(after ?? 0, limit ?? 100));
      return c.body(body, 200, { "content-type": "application/json" });
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{sid}/ws",
      operationId: "openWebSocket",
      summary: "WebSocket: every event after the cursor, then live; accepts command frames",
      request: {
        params: Sid,
        query: z.object({
          after: cursor.optional(),
          channel: z
            .string()
            .regex(/^[A-Za-z0-9_.:-]{1,128}$/, "must be 1-128 characters of A-Z a-z 0-9 _ . : -")
            .optional(),
          access_token: z.string().optional(),
        }),
      },
      responses: { 101: { description: "Switching protocols" }, ...errorResponses(401, 404, 422), 426: { description: "Not a WebSocket upgrade" } },
    }),
    async (c) => {
      c.req.valid("query");
      const stub = sessionStub(c.env, c.req.valid("param").sid);
      if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
        throw new ApiError("upgrade_required", "This route needs a WebSocket upgrade (Upgrade: websocket)");
      }
      return stub.fetch(toSession(c));
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/v1/sessions/{sid}/artifacts/{artifact_id}",
      operationId: "getArtifact",
      summary: "The bytes of a spilled output (a tool result over max_tool_result_bytes)",
      request: { params: Sid.extend({ artifact_id: z.string().openapi({ param: { name: "artifact_id", in: "path" } }) }) },
      responses: {
        200: { description: "The artifact, with its content type", content: { "application/octet-stream": { schema: z.string() } } },
        ...errorResponses(401, 404),
      },
    }),
    async (c) => {
      const { sid, artifact_id } = c.req.valid("param");
      sessionStub(c.env, sid); // checks the session id's form
      const object = /^art_[0-9a-f]{24}$/.test(artifact_id) ? await c.env.BLOBS.get(artifactKey(sid, artifact_id)) : null;
      if (!object) throw ApiError.notFound("Artifact", artifact_id);
      return new Response(object.body, {
        headers: {
          "content-type": object.httpMetadata?.contentType ?? "application/octet-stream",
          "content-length": String(object.size),
        },
      });
    },
  );
