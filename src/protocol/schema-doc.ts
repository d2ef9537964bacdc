// Markdown of JSON Schemas, for the generated references (docs/events.md, docs/reference/api.md).

export type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; required?: string[]; description?: string; [k: string]: unknown };

/** A schema's type in a few characters: a named shape, a union, an array, an object's fields. */
export function typeOf(s: JsonSchema): string {
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

/** An object's fields, `name?` when optional, with their types and descriptions, separated by <br>. */
export function fields(schema: JsonSchema): string {
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return "(none)";
  return props
    .map(([name, s]) => {
      const optional = schema.required?.includes(name) ? "" : "?";
      return `\`${name}${optional}\`: ${typeOf(s)}${s.description ? ` (${s.description})` : ""}`;
    })
    .join("<br>");
}
