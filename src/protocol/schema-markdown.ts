// JSON Schema (as z.toJSONSchema emits it) rendered as Markdown for the generated references in docs/reference/.

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  [k: string]: unknown;
};

/** A short type: a reference's name, a union, a literal, an array of items, an object's keys. */
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

/** An object's properties on one line each: `name?`: type (description). */
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

/** Text for a Markdown table cell: pipes escaped, no line breaks. */
export function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** The header comment every generated reference starts with. */
export function generatedNote(source: string): string {
  return `<!-- Generated from ${source} by \`npm run docs:reference\`; do not edit by hand. -->`;
}
