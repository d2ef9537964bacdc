// Event delivery routes (docs/reference/api.md, docs/reference/events.md): JSON pages, SSE, and WebSocket. The session object serves the
// streams itself; these routes authenticate and forward.
import type { Context } from "hono";
import { ApiError } from "../protocol/errors";
import { streams as ops } from "../protocol/operations";
import { artifactKey } from "../session/runner/turn-ports";
import { EXPIRES_HEADER, GRANTS_HEADER, KEY_HASH_HEADER } from "../session/streams/session-streams";
import { socketGrants } from "./auth";
import { type AppEnv, callSession, router, sessionStub } from "./http";
import { route } from "./operation-route";

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

export const streams = router()
  .openapi(route(ops.getEvents), async (c) => {
    const { sid } = c.req.valid("param");
    const { after, limit } = c.req.valid("query");
    const stub = sessionStub(c.env, sid);
    if ((c.req.header("accept") ?? "").includes("text/event-stream")) return stub.fetch(toSession(c));
    const body = await callSession(c.env, sid, "getEvents", { query: { after, limit }, by: c.get("keyHash") });
    return c.body(body, 200, { "content-type": "application/json" });
  })
  .openapi(route(ops.openWebSocket), async (c) => {
    c.req.valid("query");
    const stub = sessionStub(c.env, c.req.valid("param").sid);
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
      throw new ApiError("upgrade_required", "This route needs a WebSocket upgrade (Upgrade: websocket)");
    }
    return stub.fetch(toSession(c));
  })
  .openapi(route(ops.getArtifact), async (c) => {
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
  });
