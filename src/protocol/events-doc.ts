// docs/events.md, generated from the event catalog (scripts/events-doc.ts writes it; a test fails when the
// committed file differs from what the catalog says).
import { z } from "zod";
import { SHARED_SHAPES } from "./event-payloads";
import { EnvelopeSchema, EVENT_PAYLOADS, EVENT_TYPES, RuntimeEventSchema } from "./events";

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; required?: string[]; description?: string; [k: string]: unknown };

/** The catalog as JSON Schema (GET /v1/events/schema). */
export function eventCatalogSchema(): Record<string, unknown> {
  return z.toJSONSchema(RuntimeEventSchema, { unrepresentable: "any" }) as Record<string, unknown>;
}

function typeOf(s: JsonSchema): string {
  if (typeof s.$ref === "string") return s.$ref.split("/").pop()!;
  if (Array.isArray(s.type)) return s.type.join(" \\| ");
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  if (Array.isArray(s.anyOf)) return (s.anyOf as JsonSchema[]).map(typeOf).join(" \\| ");
  if (s.type === "array") return `${typeOf((s.items as JsonSchema) ?? {})}[]`;
  if (s.type === "object" && s.properties) return `{${Object.keys(s.properties).join(", ")}}`;
  if (s.type === "integer") return "integer";
  return typeof s.type === "string" ? s.type : "any";
}

function fields(schema: JsonSchema): string {
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return "(none)";
  return props
    .map(([name, s]) => {
      const optional = schema.required?.includes(name) ? "" : "?";
      return `\`${name}${optional}\`: ${typeOf(s)}${s.description ? ` (${s.description})` : ""}`;
    })
    .join("<br>");
}

/** A named schema's own definition (a schema with an id is emitted as a reference to it). */
function definition(schema: z.ZodType, name: string): JsonSchema {
  const out = z.toJSONSchema(schema, { unrepresentable: "any" }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  return out.$defs?.[name] ?? out;
}

export function eventsMarkdown(): string {
  const envelope = z.toJSONSchema(EnvelopeSchema, { unrepresentable: "any", reused: "inline" }) as JsonSchema;
  const rows = EVENT_TYPES.map((type) => {
    const payload = z.toJSONSchema(EVENT_PAYLOADS[type], { unrepresentable: "any", reused: "inline", cycles: "ref" }) as JsonSchema;
    return `| \`${type}\` | ${payload.description ? `${payload.description}<br>` : ""}${fields(payload)} |`;
  });
  return [
    "# Events",
    "",
    "<!-- Generated from src/protocol/event-payloads.ts by `npm run docs:events`; do not edit by hand. -->",
    "",
    "Every event of a session's log has the envelope below, a `type`, and that type's `payload`. The same",
    "catalog is served as JSON Schema at `GET /v1/events/schema` (no key needed) and types the events in",
    "`/openapi.json`. Fields marked `?` may be absent.",
    "",
    "## Envelope",
    "",
    fields(envelope),
    "",
    "## Payloads",
    "",
    "| type | payload |",
    "| --- | --- |",
    ...rows,
    "",
    "## Shared shapes",
    "",
    ...Object.entries(SHARED_SHAPES).flatMap(([name, schema]) => [`- \`${name}\`: ${fields(definition(schema, name)).replaceAll("<br>", ", ")}`]),
    "",
  ].join("\n");
}
