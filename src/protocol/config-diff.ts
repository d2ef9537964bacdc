// A structured diff of two agent configs (as readers see them: redacted), for GET .../versions/{v}/diff: one
// change per path that differs. Lists of named items (tools, MCP servers, sub-agents) are matched by name, so
// adding one tool reads as one change, not as every later index shifting; other lists compare by position.
import { z } from "zod";
import { own } from "./own-key";

export const ConfigChange = z.object({
  path: z.string().describe("dotted path; a named item is `http_tools[name=search]`, a list item `stop[2]`"),
  change: z.enum(["added", "removed", "changed"]),
  before: z.unknown().optional().describe("the value in the version compared against (absent: added)"),
  after: z.unknown().optional().describe("the value in this version (absent: removed)"),
});
export type ConfigChange = z.infer<typeof ConfigChange>;

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);
const named = (list: Json[]): list is { name: string }[] => list.length > 0 && list.every((i) => isObject(i) && typeof i.name === "string");

export function diffConfigs(before: Json, after: Json, path = ""): ConfigChange[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => sided(own(before, k), own(after, k), path ? `${path}.${k}` : k));
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    if ((named(before) || before.length === 0) && (named(after) || after.length === 0) && before.length + after.length > 0) {
      const names = [...new Set([...before, ...after].map((i) => (i as { name: string }).name))];
      const find = (list: Json[], n: string) => list.find((i) => (i as { name: string }).name === n);
      return names.flatMap((n) => sided(find(before, n), find(after, n), `${path}[name=${n}]`));
    }
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, i) => sided(before[i], after[i], `${path}[${i}]`)).flat();
  }
  return [{ path, change: "changed", before, after }];
}

function sided(before: Json, after: Json, path: string): ConfigChange[] {
  if (before === undefined && after === undefined) return [];
  if (before === undefined) return [{ path, change: "added", after }];
  if (after === undefined) return [{ path, change: "removed", before }];
  return diffConfigs(before, after, path);
}
