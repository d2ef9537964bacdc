// The Worker: one Hono app with the routes, plus the Durable Object classes it exports.
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { agents } from "./routes/agents";
import { authenticate } from "./routes/auth";
import { chat } from "./routes/chat";
import { fork } from "./routes/fork";
import { type AppEnv, errorJson, toApiError } from "./routes/http";
import { limitJsonDepth } from "./routes/json-depth";
import { jsonNewline } from "./routes/json-newline";
import { mcp } from "./routes/mcp";
import { rateLimit } from "./routes/rate-limit";
import { replay } from "./routes/replay";
import { requestLog } from "./routes/request-log";
import { schedules } from "./routes/schedules";
import { sessionData } from "./routes/session-data";
import { sessionIndex } from "./routes/session-index";
import { sessions } from "./routes/sessions";
import { streams } from "./routes/streams";
import { subscriptions } from "./routes/subscriptions";
import { system } from "./routes/system";
import { tokens } from "./routes/tokens";
import { ApiError } from "./runtime/errors";

export { IndexShardObject } from "./durable/index-shard";
export { RateLimiter } from "./durable/rate-limiter";
export { RegistryObject } from "./durable/registry-object";
export { SessionObject } from "./durable/session-object";

const MAX_BODY_BYTES = 1024 * 1024;

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
    allowMethods: ["GET", "PUT", "POST", "DELETE", "OPTIONS"],
    maxAge: 600,
  }),
);
const limitBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: (c) => errorJson(c, new ApiError("body_too_large", `Request body is larger than ${MAX_BODY_BYTES} bytes`)),
});
app.use("/v1/*", authenticate, rateLimit, limitBody, limitJsonDepth);
app.use("/mcp", authenticate, rateLimit, limitBody);

app.route("/", system);
app.route("/", agents);
app.route("/", sessionIndex);
app.route("/", sessionData);
app.route("/", sessions);
app.route("/", schedules);
app.route("/", subscriptions);
app.route("/", fork);
app.route("/", replay);
app.route("/", streams);
app.route("/", mcp);
app.route("/", tokens);
app.route("/", chat);

app.doc31("/openapi.json", {
  openapi: "3.1.0",
  info: { title: "Agent runtime", version: "0.1.0", description: "Hosted agent runtime on Cloudflare Workers and Durable Objects." },
  security: [{ bearer: [] }],
});
app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
app.openAPIRegistry.registerPath({
  method: "post",
  path: "/mcp",
  operationId: "mcp",
  summary: "MCP server (Streamable HTTP, stateless): each registered agent is a tool run_agent_<name> {input, session_id?}",
  request: { body: { required: true, content: { "application/json": { schema: { type: "object", description: "A JSON-RPC message or batch" } } } } },
  responses: {
    200: { description: "JSON-RPC responses, as JSON or as an SSE stream (with progress notifications)" },
    202: { description: "Accepted (notifications and responses sent by the client)" },
    401: { description: "Missing or invalid API key" },
  },
});

app.notFound((c) => errorJson(c, new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`)));
app.onError((err, c) => errorJson(c, toApiError(err)));

export default app;
