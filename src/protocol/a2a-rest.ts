// A2A 1.0's HTTP+JSON binding (docs/guides/a2a.md, "HTTP+JSON"): an error is an HTTP status with the body
// `{error: {code, status, message, details}}` (google.rpc.Status), whose details carry an ErrorInfo naming the
// A2A error by its reason (TASK_NOT_FOUND...), as the A2A SDKs read it. Each JSON-RPC error code has its twin here.
import { z } from "zod";
import type { RpcErrorName } from "./a2a";

export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";
export const A2A_ERROR_DOMAIN = "a2a-protocol.org";

/** The HTTP status, the google.rpc code name and the ErrorInfo reason of each A2A error. */
export const REST_ERRORS: Record<RpcErrorName, { http: number; status: string; reason: string }> = {
  parse: { http: 400, status: "INVALID_ARGUMENT", reason: "INVALID_PARAMS" },
  invalidRequest: { http: 400, status: "INVALID_ARGUMENT", reason: "INVALID_PARAMS" },
  methodNotFound: { http: 404, status: "NOT_FOUND", reason: "METHOD_NOT_FOUND" },
  invalidParams: { http: 400, status: "INVALID_ARGUMENT", reason: "INVALID_PARAMS" },
  internal: { http: 500, status: "INTERNAL", reason: "INTERNAL_ERROR" },
  taskNotFound: { http: 404, status: "NOT_FOUND", reason: "TASK_NOT_FOUND" },
  taskNotCancelable: { http: 409, status: "FAILED_PRECONDITION", reason: "TASK_NOT_CANCELABLE" },
  pushNotSupported: { http: 400, status: "FAILED_PRECONDITION", reason: "PUSH_NOTIFICATION_NOT_SUPPORTED" },
  unsupportedOperation: { http: 400, status: "FAILED_PRECONDITION", reason: "UNSUPPORTED_OPERATION" },
  contentTypeNotSupported: { http: 415, status: "INVALID_ARGUMENT", reason: "CONTENT_TYPE_NOT_SUPPORTED" },
  invalidAgentResponse: { http: 502, status: "INTERNAL", reason: "INVALID_AGENT_RESPONSE" },
  extendedCardNotConfigured: { http: 400, status: "FAILED_PRECONDITION", reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED" },
  versionNotSupported: { http: 400, status: "FAILED_PRECONDITION", reason: "VERSION_NOT_SUPPORTED" },
};

/** The error body of the binding (its schema, for the declarations). */
export const RestErrorBody = z
  .object({
    error: z.object({
      code: z.int(),
      status: z.string(),
      message: z.string(),
      details: z.array(z.looseObject({ "@type": z.string(), reason: z.string().optional(), domain: z.string().optional() })),
    }),
  })
  .meta({ id: "A2aRestError" });
export type RestErrorBody = z.infer<typeof RestErrorBody>;

/** The binding's error for an A2A error; `data` (the fields refused) goes in the ErrorInfo's metadata as JSON. */
export function restError(kind: RpcErrorName, message: string, data?: unknown): { http: number; body: RestErrorBody } {
  const { http, status, reason } = REST_ERRORS[kind];
  const metadata = data === undefined ? {} : { metadata: { data: JSON.stringify(data) } };
  return { http, body: { error: { code: http, status, message, details: [{ "@type": ERROR_INFO_TYPE, reason, domain: A2A_ERROR_DOMAIN, ...metadata }] } } };
}

/** A 404 of the binding that is no A2A error (an agent the caller cannot reach): no ErrorInfo. */
export const restNotFound = (message: string): { http: 404; body: RestErrorBody } => ({
  http: 404,
  body: { error: { code: 404, status: "NOT_FOUND", message, details: [] } },
});
