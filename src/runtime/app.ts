// The Worker's Hono app: the routes, mounted under a deployment's own app (createApp) that gives every request
// the deployment's in-process tools.
import { OpenAPIHono } from "@hono/zod-openapi";
import { cors } from "hono/cors";
import type { InProcessTools } from "../engine/tools/in-process";
import { ApiError } from "../protocol/errors";
import { a2a } from "../routes/a2a";
import { a2aRest } from "../routes/a2a-rest";
import { agentVersions } from "../routes/agent-versions";
import { agents } from "../routes/agents";
import { authenticateUnmatched } from "../routes/auth";
import { chat } from "../routes/chat";
import { codeTools } from "../routes/code-tools";
import { datasets } from "../routes/datasets";
import { evals } from "../routes/evals";
import { files } from "../routes/files";
import { fork } from "../routes/fork";
import { type AppEnv, errorJson, toApiError } from "../routes/http";
import { sessionIndex } from "../routes/index-fanout";
import { jsonNewline } from "../routes/json-newline";
import { mcp } from "../routes/mcp";
import { quotas } from "../routes/quotas";
import { replay } from "../routes/replay";
import { requestLog } from "../routes/request-log";
import { resources } from "../routes/resources";
import { responses } from "../routes/responses";
import { sessionData } from "../routes/session-data";
import { sessionOperations } from "../routes/session-operations";
import { sessions } from "../routes/sessions";
import { streams } from "../routes/streams";
import { system } from "../routes/system";
import { tokens } from "../routes/tokens";

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
    allowHeaders: ["authorization", "content-type", "last-event-id", "mcp-protocol-version", "traceparent", "a2a-version"],
    allowMethods: ["GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS"],
    maxAge: 600,
  }),
);
// Each operation authenticates and authorizes its caller, counts its rate limits and bounds its body (routes/operation-route.ts).

app.route("/", system);
app.route("/", agents);
app.route("/", codeTools);
app.route("/", agentVersions);
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
app.route("/", datasets);
app.route("/", evals);
app.route("/", a2a);
app.route("/", a2aRest);

/** The app of a deployment whose in-process tools are `tools`: the routes, the OpenAPI document and the error envelope. */
export function createApp(tools: InProcessTools): OpenAPIHono<AppEnv> {
  const root = new OpenAPIHono<AppEnv>();
  root.use("*", async (c, next) => {
    c.set("tools", tools);
    await next();
  });
  root.route("/", app);
  root.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: { title: "Agent runtime", version: "0.1.0", description: "Hosted agent runtime on Cloudflare Workers and Durable Objects." },
    security: [{ bearer: [] }],
  });
  root.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  root.notFound(async (c) => {
    // Under /v1, /mcp and /a2a a caller without a valid credential learns nothing, not even that a route is missing.
    if (c.req.path.startsWith("/v1/") || c.req.path === "/mcp" || c.req.path.startsWith("/a2a/")) await authenticateUnmatched(c);
    return errorJson(c, new ApiError("not_found", `No route for ${c.req.method} ${c.req.path}`));
  });
  root.onError((err, c) => errorJson(c, toApiError(err)));
  return root;
}
