// Outbound subscriptions of a session: create, list, enable or disable, delete (the session object delivers).
import { z } from "zod";
import { CreateSubscriptionBody, SubscriptionSchema, UpdateSubscriptionBody } from "../subscriptions";
import { json, jsonBody, operation, Sid, sidWith } from "./operation";

const SidSub = sidWith("subscription_id");

export const createSubscription = operation({
  method: "post",
  path: "/v1/sessions/{sid}/subscriptions",
  operationId: "createSubscription",
  summary: "POST the session's events (signed, in order, at least once) to a URL under TOOL_URL_ALLOWLIST",
  permission: "session.subscribe",
  rateLimit: "request",
  params: Sid,
  body: jsonBody(CreateSubscriptionBody),
  responses: { 201: json(SubscriptionSchema.extend({ secret: z.string() }), "Created; the signing secret is returned here only") },
  errors: [404, 409, 422],
  session: true,
});

export const listSubscriptions = operation({
  method: "get",
  path: "/v1/sessions/{sid}/subscriptions",
  operationId: "listSubscriptions",
  summary: "The session's subscriptions with their cursors and delivery status",
  permission: "session.subscribe",
  rateLimit: "request",
  params: Sid,
  responses: { 200: json(z.object({ subscriptions: z.array(SubscriptionSchema) }), "Subscriptions") },
  errors: [404],
  session: true,
});

export const updateSubscription = operation({
  method: "patch",
  path: "/v1/sessions/{sid}/subscriptions/{subscription_id}",
  operationId: "updateSubscription",
  summary: "Disable a subscription, or enable it again (a failing one retries at once)",
  permission: "session.subscribe",
  rateLimit: "request",
  params: SidSub,
  body: jsonBody(UpdateSubscriptionBody),
  responses: { 200: json(SubscriptionSchema, "Updated") },
  errors: [404, 422],
  session: true,
});

export const deleteSubscription = operation({
  method: "delete",
  path: "/v1/sessions/{sid}/subscriptions/{subscription_id}",
  operationId: "deleteSubscription",
  summary: "Delete a subscription (nothing more is sent)",
  permission: "session.subscribe",
  rateLimit: "request",
  params: SidSub,
  responses: { 200: json(z.object({ deleted: z.literal(true) }), "Deleted") },
  errors: [404],
  session: true,
});
