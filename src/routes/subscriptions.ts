// Outbound subscriptions of a session: create, list, enable or disable, delete (the object delivers).
import { createRoute, z } from "@hono/zod-openapi";
import { CreateSubscriptionBody, SubscriptionSchema, UpdateSubscriptionBody } from "../protocol/subscriptions";
import { unwrap } from "../runtime/errors";
import { errorResponses, router, sessionStub } from "./http";

const Sid = z.object({ sid: z.string().openapi({ param: { name: "sid", in: "path" }, example: "ses_0123456789abcdef01234567" }) });
const SidSub = Sid.extend({ subscription_id: z.string().openapi({ param: { name: "subscription_id", in: "path" } }) });
const json = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
const PATH = "/v1/sessions/{sid}/subscriptions";

export const subscriptions = router()
  .openapi(
    createRoute({
      method: "post",
      path: PATH,
      operationId: "createSubscription",
      summary: "POST the session's events (signed, in order, at least once) to a URL under TOOL_URL_ALLOWLIST",
      request: { params: Sid, body: { required: true, content: { "application/json": { schema: CreateSubscriptionBody } } } },
      responses: {
        201: json(SubscriptionSchema.extend({ secret: z.string() }), "Created; the signing secret is returned here only"),
        ...errorResponses(400, 401, 403, 404, 409, 413, 422),
      },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).createSubscription(c.req.valid("json"))), 201),
  )
  .openapi(
    createRoute({
      method: "get",
      path: PATH,
      operationId: "listSubscriptions",
      summary: "The session's subscriptions with their cursors and delivery status",
      request: { params: Sid },
      responses: { 200: json(z.object({ subscriptions: z.array(SubscriptionSchema) }), "Subscriptions"), ...errorResponses(401, 403, 404) },
    }),
    async (c) => c.json(unwrap(await sessionStub(c.env, c.req.valid("param").sid).listSubscriptions()), 200),
  )
  .openapi(
    createRoute({
      method: "patch",
      path: `${PATH}/{subscription_id}`,
      operationId: "updateSubscription",
      summary: "Disable a subscription, or enable it again (a failing one retries at once)",
      request: { params: SidSub, body: { required: true, content: { "application/json": { schema: UpdateSubscriptionBody } } } },
      responses: { 200: json(SubscriptionSchema, "Updated"), ...errorResponses(400, 401, 403, 404, 422) },
    }),
    async (c) => {
      const { sid, subscription_id } = c.req.valid("param");
      return c.json(unwrap(await sessionStub(c.env, sid).enableSubscription(subscription_id, c.req.valid("json").enabled)), 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: `${PATH}/{subscription_id}`,
      operationId: "deleteSubscription",
      summary: "Delete a subscription (nothing more is sent)",
      request: { params: SidSub },
      responses: { 200: json(z.object({ deleted: z.literal(true) }), "Deleted"), ...errorResponses(401, 403, 404) },
    }),
    async (c) => {
      const { sid, subscription_id } = c.req.valid("param");
      return c.json(unwrap(await sessionStub(c.env, sid).deleteSubscription(subscription_id)), 200);
    },
  );
