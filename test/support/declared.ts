// Every response a test reads through the HTTP helpers is held to what src/protocol/operations declares for
// its method and path: a success to its status's declared body schema, an error to the error envelope with a
// code of ERROR_CODES at that code's status. A mismatch fails the test, naming the operation and the zod issue.
import type { z } from "zod";
import { ERROR_CODES } from "../../src/protocol/errors";
import { OPERATIONS, type Operation } from "../../src/protocol/operations";
import { ErrorBody, errorStatuses } from "../../src/protocol/operations/operation";

interface Route {
  op: Operation;
  /** Each segment: a literal, or a pattern when it holds a `{param}` (A2A's `{id}:cancel` is one with a literal tail). */
  segments: (string | RegExp)[];
}

const segmentOf = (s: string): string | RegExp =>
  s.includes("{")
    ? new RegExp(
        `^${s
          .split(/\{[^}]+\}/)
          .map((t) => t.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
          .join("[^/]+")}$`,
      )
    : s;
const literals = (r: Route) => r.segments.filter((s) => typeof s === "string").length;

// `{param}` segments match any one segment; where two paths match, the one with more literal segments wins.
const ROUTES: Route[] = OPERATIONS.map((op) => ({ op, segments: op.path.split("/").map(segmentOf) })).sort((a, b) => literals(b) - literals(a));

/** A path segment decoded, or as sent when its percent-encoding is malformed (the runtime must refuse it, not fail). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The declared operation of a request (the path may carry a query and need not be absolute), if any. */
export function declaredOperation(method: string, path: string): Operation | undefined {
  const segments = new URL(path, "https://runtime.test").pathname.split("/");
  const m = method.toLowerCase();
  return ROUTES.find(
    (r) =>
      r.op.method === m &&
      r.segments.length === segments.length &&
      r.segments.every((s, i) => {
        const given = decoded(segments[i] ?? "");
        return typeof s === "string" ? s === given : s.test(given);
      }),
  )?.op;
}

const speaksJson = (op: Operation) => Object.values(op.responses).some((reply) => reply.content?.["application/json"]);

const issues = (error: z.ZodError) => error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");

/**
 * Why a response does not match its declaration, or null when it does. `body` is the parsed JSON (or the text
 * when it was not JSON); responses of undeclared paths are only held to the error envelope.
 */
export function declarationMismatch(method: string, path: string, status: number, contentType: string | null, body: unknown): string | null {
  const op = declaredOperation(method, path);
  const name = op ? `${op.operationId} (${method.toUpperCase()} ${op.path})` : `${method.toUpperCase()} ${path}`;
  const declaredError = !!op && (errorStatuses(op) as number[]).includes(status);
  // An operation with no JSON body of its own (POST /mcp speaks JSON-RPC) answers the envelope only where it declares it.
  if (status >= 400 && op && !declaredError && !speaksJson(op)) return null;
  if (status >= 400 && op && !declaredError) return `${name} answered ${status}, declared errors: ${errorStatuses(op).join(", ")}`;
  if (status >= 400 && op?.errorBody && declaredError && (op.errors as number[]).includes(status)) {
    const parsed = op.errorBody.safeParse(body);
    return parsed.success ? null : `${name} answered ${status} outside its protocol's error shape: ${issues(parsed.error)}`;
  }
  if (status >= 400) {
    const parsed = ErrorBody.safeParse(body);
    if (!parsed.success) return `${name} answered ${status} outside the error envelope: ${issues(parsed.error)}`;
    const declared = ERROR_CODES[parsed.data.error.code as keyof typeof ERROR_CODES];
    if (!declared) return `${name} answered ${status} with the undeclared error code ${parsed.data.error.code}`;
    if (declared.status !== status) return `${name} answered ${status} with ${parsed.data.error.code}, declared at ${declared.status}`;
    return null;
  }
  if (!op || status < 200 || status >= 300) return null;
  const reply = op.responses[status];
  if (!reply) return `${name} answered ${status}, declared: ${Object.keys(op.responses).join(", ")}`;
  const schema = reply.content?.["application/json"];
  const media = contentType?.split(";")[0]?.trim().toLowerCase();
  if (!schema || media !== "application/json") return null;
  const parsed = schema.safeParse(body);
  return parsed.success ? null : `${name} answered ${status} outside its declared schema: ${issues(parsed.error)}`;
}
