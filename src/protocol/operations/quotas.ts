// Quotas (docs/guides/quotas.md): the definitions; their counts per subject are read with GET /v1/quotas/:id.
import { z } from "zod";
import { QuotaId, QuotaSchema, QuotaSpec } from "../quotas";
import { json, jsonBody, operation } from "./operation";

const Id = z.object({ id: QuotaId.meta({ example: "daily-spend" }) });

export const putQuota = operation({
  method: "put",
  path: "/v1/quotas/{id}",
  operationId: "putQuota",
  summary:
    "Create or replace a quota: limits (usd, input_tokens, output_tokens, turns, concurrent_turns) for a scope (the deployment, a key, an end user, a resource, an agent) over a UTC day or month or a rolling window, refusing or pausing turns that would cross one",
  permission: "quotas.write",
  rateLimit: "request",
  params: Id,
  body: jsonBody(QuotaSpec),
  responses: { 200: json(QuotaSchema, "Replaced"), 201: json(QuotaSchema, "Created") },
  errors: [422],
});

export const listQuotas = operation({
  method: "get",
  path: "/v1/quotas",
  operationId: "listQuotas",
  summary: "The deployment's quotas, by id (definitions; GET /v1/quotas/:id has a quota's usage)",
  permission: "usage.read",
  rateLimit: "request",
  responses: { 200: json(z.object({ quotas: z.array(QuotaSchema) }), "Quotas") },
  errors: [],
});

export const getQuota = operation({
  method: "get",
  path: "/v1/quotas/{id}",
  operationId: "getQuota",
  summary:
    "A quota with its usage and what remains in the current window: for its scope's id, or (a scope without id, a limit for each one) for the `subject` the query names",
  permission: "usage.read",
  rateLimit: "request",
  params: Id,
  query: z.object({ subject: z.string().min(1).max(200).optional() }),
  responses: { 200: json(QuotaSchema, "The quota") },
  errors: [404, 422],
});

export const deleteQuota = operation({
  method: "delete",
  path: "/v1/quotas/{id}",
  operationId: "deleteQuota",
  summary: "Delete a quota (turns it paused look again and go on)",
  permission: "quotas.write",
  rateLimit: "request",
  params: Id,
  responses: { 200: json(z.object({ deleted: z.literal(true), id: z.string() }), "Deleted") },
  errors: [404],
});
