// docs/reference/events.md, generated from the event catalog (`npm run docs:reference` writes it; a test fails
// when the committed file differs from what the catalog says).
import { z } from "zod";
import { SHARED_SHAPES } from "./event-shapes";
import { EnvelopeSchema, EVENT_PAYLOADS, EVENT_TYPES, RuntimeEventSchema } from "./events";
import { fields, generatedNote, type JsonSchema } from "./schema-markdown";

/** The catalog as JSON Schema (GET /v1/events/schema). */
export function eventCatalogSchema(): Record<string, unknown> {
  return z.toJSONSchema(RuntimeEventSchema, { unrepresentable: "any" }) as Record<string, unknown>;
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
    generatedNote("src/protocol/event-payloads.ts"),
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
