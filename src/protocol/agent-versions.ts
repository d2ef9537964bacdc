// Agent versions, labels and traffic as the API shows them (docs/guides/versions.md), and how a
// session names the agent it opens: `name`, `name@<version>` or `name@<label>`.
import { z } from "zod";

export const AgentVersionSchema = z
  .object({
    agent: z.string(),
    version: z.number().describe("numbered from 1 per agent, never reused"),
    content_hash: z.string().describe("keyed SHA-256 of the canonical config: equal configs have equal hashes"),
    created_at: z.number().describe("ms since the epoch"),
    created_by: z.string().nullable().describe("the principal who stored it (null: stored before versions)"),
  })
  .meta({ id: "AgentVersion" });
export type AgentVersion = z.infer<typeof AgentVersionSchema>;

/** A label's name: a letter first, so `name@3` always means a version. */
export const LABEL = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const LabelName = z.string().regex(LABEL, "must match ^[A-Za-z][A-Za-z0-9_-]{0,63}$");

export const AgentLabelSchema = z
  .object({
    label: z.string(),
    version: z.number(),
    moved_at: z.number(),
    moved_by: z.string().nullable(),
    history: z
      .array(z.object({ version: z.number(), from_version: z.number().nullable(), moved_at: z.number(), moved_by: z.string().nullable() }))
      .describe("every move of the label, oldest first (a rollback is a move back)"),
  })
  .meta({ id: "AgentLabel" });
export type AgentLabel = z.infer<typeof AgentLabelSchema>;

export const TrafficRoute = z.strictObject({
  label: LabelName,
  weight: z.number().int().min(0).max(1000).describe("a share of new sessions: weight / sum of the weights"),
});
export type TrafficRoute = z.infer<typeof TrafficRoute>;
export const TrafficRoutes = z.array(TrafficRoute).max(10);

export const AgentTrafficSchema = z
  .object({
    agent: z.string(),
    routes: z.array(TrafficRoute).describe("empty: new sessions opened by the agent's name run its newest version"),
    updated_at: z.number().nullable(),
    updated_by: z.string().nullable(),
  })
  .meta({ id: "AgentTraffic" });
export type AgentTraffic = z.infer<typeof AgentTrafficSchema>;

/** What the registry answers for a name: its newest version, its labels and its traffic (cached per isolate). */
export interface AgentRouting {
  version: number;
  labels: Record<string, number>;
  routes: TrafficRoute[];
}

/** `name`, `name@3` or `name@canary`: the agent and, when given, its version or label. */
export function parseAgentRef(ref: string): { name: string; version?: number; label?: string } {
  const at = ref.lastIndexOf("@");
  if (at < 0) return { name: ref };
  const name = ref.slice(0, at);
  const pin = ref.slice(at + 1);
  return /^[1-9][0-9]{0,8}$/.test(pin) ? { name, version: Number(pin) } : { name, label: pin };
}

/**
 * The label a new session goes to: the routes' weights split the range of a 32-bit hash of the resource
 * (the same resource always lands on the same label while the weights stay) or, with no resource, of a random
 * number. Null when the weights sum to 0 (never stored) or no route is given.
 */
export function pickRoute(routes: TrafficRoute[], sticky: string | null): string | null {
  const total = routes.reduce((s, r) => s + r.weight, 0);
  if (total <= 0) return null;
  const point = (sticky === null ? Math.random() : fnv1a(sticky) / 2 ** 32) * total;
  let acc = 0;
  for (const r of routes) {
    acc += r.weight;
    if (point < acc) return r.label;
  }
  return routes.at(-1)!.label;
}

/** FNV-1a, 32 bits, with murmur3's finalizer so ids that differ in one character spread over the whole range. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
