// Injected tool args (docs/guides/subagents-and-budgets.md): extra optional string properties on every exposed tool schema that the
// model fills in (for example a UI correlation id). They are split off before the tool runs and recorded.
import type { JsonSchema } from "./types";

/** A deep copy of `schema` with the injected properties added; the tool's own schema is never mutated. */
export function withInjectedArgs(schema: JsonSchema, injected: Record<string, string>): JsonSchema {
  const keys = Object.keys(injected);
  if (keys.length === 0) return schema;
  const copy = structuredClone(schema);
  const properties = { ...((copy.properties as Record<string, unknown> | undefined) ?? {}) };
  for (const key of keys) properties[key] = { type: "string", description: injected[key] };
  copy.properties = properties;
  return copy;
}

/** Separates what the tool receives from the injected values the model sent. */
export function splitInjectedArgs(
  args: Record<string, unknown>,
  injected: Record<string, string>,
): { executable: Record<string, unknown>; injected: Record<string, unknown> } {
  const executable: Record<string, unknown> = {};
  const found: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (Object.hasOwn(injected, key)) found[key] = value;
    else executable[key] = value;
  }
  return { executable, injected: found };
}

/** The injected arg names that clash with a real parameter of the tool. */
export function injectedArgClashes(schema: JsonSchema, injected: Record<string, string>): string[] {
  const properties = (schema.properties as Record<string, unknown> | undefined) ?? {};
  return Object.keys(injected).filter((key) => Object.hasOwn(properties, key));
}
