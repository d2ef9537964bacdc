// A form drawn from a JSON Schema (an ask_user question's response_schema): an enum is a select, a boolean a
// checkbox, a number or integer a number field, a string a text field, and an object of those a group of
// fields. Any other schema is answered as JSON in a text box. The values are checked here for what a field
// can say (a number, a required field); the server checks the rest against the schema (422 names the path).
import { useState } from "preact/hooks";

export type Schema = Record<string, unknown>;
type Kind = "select" | "checkbox" | "number" | "text" | "json";
type Values = Record<string, string | boolean>;

function kindOf(s: Schema): Kind {
  if (Array.isArray(s.enum)) return "select";
  if (s.type === "boolean") return "checkbox";
  if (s.type === "number" || s.type === "integer") return "number";
  return s.type === "string" || s.type === undefined ? "text" : "json";
}

/** The fields of a schema: one per property of a flat object, else the schema itself (name ""). */
function fieldsOf(schema: Schema): { name: string; schema: Schema; required: boolean }[] {
  const props = schema.properties as Record<string, Schema> | undefined;
  if (schema.type === "object" && props && Object.values(props).every((p) => kindOf(p) !== "json")) {
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    return Object.entries(props).map(([name, p]) => ({ name, schema: p, required: required.has(name) }));
  }
  return [{ name: "", schema, required: true }];
}

/** A field's value as the schema wants it, or an error sentence; undefined leaves an optional field out. */
function fieldValue(kind: Kind, s: Schema, raw: string | boolean | undefined, required: boolean): { value?: unknown; error?: string } {
  if (kind === "checkbox") return { value: raw === true };
  const text = typeof raw === "string" ? raw : "";
  if (kind === "select") {
    const options = s.enum as unknown[];
    return text === "" ? (required ? { error: "choose one" } : {}) : { value: options[Number(text)] };
  }
  if (text.trim() === "" && kind !== "text") return required ? { error: "required" } : {};
  if (kind === "number") {
    const n = Number(text);
    if (!Number.isFinite(n)) return { error: "enter a number" };
    if (s.type === "integer" && !Number.isInteger(n)) return { error: "enter a whole number" };
    return { value: n };
  }
  if (kind === "json") {
    try {
      return { value: JSON.parse(text) };
    } catch {
      return { error: "not valid JSON" };
    }
  }
  return text === "" && !required ? {} : { value: text };
}

export function SchemaForm({
  schema,
  id,
  label,
  busy,
  onSubmit,
}: {
  schema: Schema;
  id: string;
  label: string;
  busy: boolean;
  onSubmit(value: unknown): void;
}) {
  const fields = fieldsOf(schema);
  const [values, setValues] = useState<Values>({});
  const [problem, setProblem] = useState<string | null>(null);
  const set = (name: string, v: string | boolean) => {
    setValues((prev) => ({ ...prev, [name]: v }));
    setProblem(null);
  };

  const submit = (e: Event) => {
    e.preventDefault();
    const answer: Record<string, unknown> = {};
    for (const f of fields) {
      const r = fieldValue(kindOf(f.schema), f.schema, values[f.name], f.required);
      if (r.error) return setProblem(`${f.name || "Answer"}: ${r.error}`);
      if (f.name === "") return send(r.value);
      if ("value" in r) answer[f.name] = r.value;
    }
    send(answer);
  };
  const send = (value: unknown) => {
    setProblem(null);
    onSubmit(value);
  };

  return (
    <form class="schema-form" aria-label={label} onSubmit={submit}>
      {fields.map((f) => (
        <Field key={f.name} id={`${id}-${f.name || "answer"}`} field={f} value={values[f.name]} onChange={(v) => set(f.name, v)} />
      ))}
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      <div class="buttons">
        <button type="submit" disabled={busy}>
          Answer
        </button>
      </div>
    </form>
  );
}

function Field({
  id,
  field,
  value,
  onChange,
}: {
  id: string;
  field: ReturnType<typeof fieldsOf>[number];
  value: string | boolean | undefined;
  onChange(v: string | boolean): void;
}) {
  const s = field.schema;
  const kind = kindOf(s);
  const title = typeof s.title === "string" ? s.title : field.name || "Answer";
  const hint = typeof s.description === "string" ? s.description : null;
  const text = typeof value === "string" ? value : "";
  const label = `${title}${field.required || kind === "checkbox" ? "" : " (optional)"}`;
  if (kind === "checkbox")
    return (
      <label class="check" for={id}>
        <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} /> {label}
      </label>
    );
  return (
    <>
      <label for={id}>{label}</label>
      {hint && <p class="hint">{hint}</p>}
      {kind === "select" ? (
        <select id={id} value={text} onChange={(e) => onChange(e.currentTarget.value)}>
          <option value="">Choose…</option>
          {(s.enum as unknown[]).map((o, i) => (
            <option key={String(o)} value={String(i)}>
              {typeof o === "string" ? o : JSON.stringify(o)}
            </option>
          ))}
        </select>
      ) : kind === "json" ? (
        <textarea id={id} rows={4} value={text} onInput={(e) => onChange(e.currentTarget.value)} />
      ) : (
        <input
          id={id}
          type={kind === "number" ? "number" : "text"}
          step={s.type === "integer" ? 1 : "any"}
          value={text}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      )}
    </>
  );
}
