// docs/reference/api.md, generated from the operation declarations (`npm run docs:reference` writes it; a test
// fails when the committed file differs from what the declarations say).
import { z } from "zod";
import { OPERATIONS, type Operation } from "./operations";
import { errorStatuses } from "./operations/operation";
import { scopeFor } from "./permissions";
import { fields, type JsonSchema, typeOf } from "./schema-markdown";

/** An object's fields (a named schema's, after its name); for anything else (a union, a record) its type. */
function described(schema: z.ZodType, io: "input" | "output" = "input"): string {
  const out = z.toJSONSchema(schema, { unrepresentable: "any", io, reused: "inline", cycles: "ref" }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  const name = typeof out.$ref === "string" ? out.$ref.split("/").pop()! : null;
  const s = (name && out.$defs?.[name]) || out;
  const shape = s.properties ? fields(s) : typeOf(s);
  return name ? `${name}: ${shape}` : shape;
}

function access(op: Operation): string {
  if (op.permission === "public") return "none (no key needed)";
  const scope = scopeFor(op.permission);
  return `\`${op.permission}\`; token scope ${scope ? `\`${scope}\`` : "none (keys only)"}${op.queryCredential ? `; \`?access_token=\` accepted${op.queryCredential === "event-stream" ? " for SSE" : ""}` : ""}`;
}

function section(op: Operation): string[] {
  const rows: [string, string][] = [["Access", access(op)]];
  if (op.params) rows.push(["Path", described(op.params)]);
  if (op.query) rows.push(["Query", described(op.query)]);
  if (op.body) rows.push([`Body (JSON${op.body.required ? "" : ", optional"})`, described(op.body.schema)]);
  for (const [status, reply] of Object.entries(op.responses)) {
    const media = Object.entries(reply.content ?? {}).map(([type, schema]) => (type === "application/json" ? described(schema, "output") : `\`${type}\``));
    rows.push([status, [reply.description, ...media].join("<br>")]);
  }
  const errors = errorStatuses(op);
  if (errors.length > 0) rows.push(["Errors", errors.join(", ")]);
  // A protocol's own error shape for its statuses (the rest stay the envelope).
  if (op.errorBody) rows.push(["Error body", `${op.errors.join(", ")}: ${described(op.errorBody)}`]);
  return [
    `### \`${op.method.toUpperCase()} ${op.path}\` (${op.operationId})`,
    "",
    op.summary,
    "",
    "| | |",
    "| --- | --- |",
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    "",
  ];
}

export function apiMarkdown(): string {
  return [
    "# API reference",
    "",
    "<!-- Generated from src/protocol/operations/ by `npm run docs:reference`; do not edit by hand. -->",
    "",
    "Every operation of the HTTP API: who may call it (the permission a key's role or a browser token's scope",
    "must allow), what it takes and what it answers. `/openapi.json` is generated from the same declarations.",
    "Errors are the envelope `{error: {code, message, details?}}`; fields marked `?` may be absent.",
    "",
    "| method and path | operation | permission |",
    "| --- | --- | --- |",
    ...OPERATIONS.map((op) => `| \`${op.method.toUpperCase()} ${op.path}\` | ${op.operationId} | ${op.permission} |`),
    "",
    "## Operations",
    "",
    ...OPERATIONS.flatMap(section),
  ].join("\n");
}
