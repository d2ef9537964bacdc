// Short human forms of values, durations, money and deadlines for the inspector's cards and rows.
import { RuntimeError } from "../../../src/client/index";

/** One line of at most `max` characters: strings as they are, anything else as JSON. */
export function preview(value: unknown, max = 160): string {
  if (value === undefined || value === null) return "";
  const text = (typeof value === "string" ? value : JSON.stringify(value)).replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The whole value, JSON indented. */
export function pretty(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

export function duration(ms: number | null): string {
  if (ms === null) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function usd(cost: number | null): string {
  if (cost === null) return "cost unknown";
  return cost === 0 ? "$0" : cost < 0.01 ? `$${cost.toFixed(5)}` : `$${cost.toFixed(3)}`;
}

export const count = (n: number): string => n.toLocaleString("en-US");

export function clock(ts: number): string {
  return new Date(ts).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/** "in 14 min 2 s" until a deadline, or "expired". */
export function until(deadline: number, now: number): string {
  const left = deadline - now;
  return left <= 0 ? "expired" : `in ${duration(Math.ceil(left / 1000) * 1000)}`;
}

/** A sentence for an error of a request: the server's message and, for 422, each field and its reason. */
export function describeError(err: unknown): string {
  if (err instanceof RuntimeError) {
    const fields = err.fieldIssues.map((f) => `${f.path}: ${f.reason}`);
    return fields.length > 0 ? `${err.message} (${fields.join("; ")})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  return n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** A content hash's first 12 hex digits (its `sha256:` prefix left out); the whole hash goes in a title. */
export const shortHash = (hash: string): string => hash.replace(/^sha256:/, "").slice(0, 12);

/** "1 step", "3 steps". */
export const plural = (n: number, word: string): string => `${count(n)} ${word}${n === 1 ? "" : "s"}`;
