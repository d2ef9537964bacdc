// The Worker: one Hono app with the routes, plus the Durable Object classes it exports.
import { OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import { ApiError } from "./protocol/errors";
import { agents } from "./routes/agents";
import { authenticateUnmatched } from "./routes/auth";
import { chat } from "./routes/chat";
import { files } from "./routes/files";
import { fork } from "./routes/fork";
import { type AppEnv, errorJson, toApiError } from "./routes/http";
import { sessionIndex } from "./routes/index-fanout";
import { jsonNewline } from "./routes/json-newline";
import { mcp } from "./routes/mcp";
import { quotas } from "./routes/quotas";
import { replay } from "./routes/replay";
import { requestLog } from "./routes/request-log";
import { resources } from "./routes/resources";
import { responses } from "./routes/responses";
import { sessionData } from "./routes/session-data";
import { sessionOperations } from "./routes/session-operations";
import { sessions } from "./routes/sessions";
import { streams } from "./routes/streams";
import { system } from "./routes/system";
import { tokens } from "./routes/tokens";

export { IndexShardObject } from "./objects/index/index-shard";
export { ResourceMemoryObject } from "./objects/memory/resource-memory-object";
export { QuotaObject } from "./objects/quota/quota-object";
export { RateLimiter } from "./objects/rate-limiter/rate-limiter";
export { RegistryObject } from "./objects/registry/registry-object";
export { SessionObject } from "./session/object";

const app = new OpenAPIHono<AppEnv>();

app.use("*", requestLog, jsonNewline);
app.use(
  "*",
  cors({
    origin: (origin, c) => {
      const allowed = ((c.env as AppEnv["Bindings"]).CORS_ORIGINS ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      return allowed.includes("*") ? origin : allowed.includes(origin) ? origin : null;
    },
    allowHeaders: ["authorization", "content-type", "last-event-id", "mcp-protocol-version", "traceparent"],
    allowMethods: ["GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS"],
    maxAge: 600,
  }),
);
// Each operation authenticates and authorizes its caller, counts its rate limits and bounds its body (routes/operation-route.ts).

app.route("/", system);
app.route("/", agents);
app.route("/", sessionIndex);
app.route("/", sessionData);
app.route("/", files);
app.route("/", sessions);
app.route("/", sessionOperations);
app.route("/", fork);
app.route("/", replay);
app.route("/", streams);
app.route("/", mcp);
app.route("/", tokens);
app.route("/", chat);
app.route("/", resources);
app.route("/", responses);
app.route("/", quotas);

app.doc31("/openapi.json", {
  openapi: "3.1.0",
  info: { title: "Agent runtime", version: "0.1.0", description: "Hosted agent runtime on Cloudflare Workers and Durable Objects." },
  security: [{ bearer: [] }],
});
app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
app.notFound(async (c) => {
  // Under /v1 and /mcp a caller without a valid credential learns nothing, not even that a route is missing.
  if (c.req.path.startsWith("/v1/") || c.req.path === "/mcp") await authenticateUnmatched(c);
  return errorJson(c, new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`));
});
app.onError((err, c) => errorJson(c, toApiError(err)));

export default app;
