// A session's metadata (POST /v1/sessions, fork): a JSON object bounded at write time, because every copy of
// it is stored in the session index, returned in each listing and queried there by `metadata.<key>`.
import { z } from "zod";

/** Nesting depth: a flat object is 1, an object in it 2, and so on. */
export const MAX_METADATA_DEPTH = 5;
/** Keys and array items, at every level, together. */
export const MAX_METADATA_ENTRIES = 100;
/** The object as JSON, in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 16 * 1024;

/** Why `metadata` is over a bound, or null. */
function overBound(metadata: Record<string, unknown>): string | null {
  let entries = 0;
  const stack: { v: unknown; depth: number }[] = [{ v: metadata, depth: 1 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > MAX_METADATA_DEPTH) return `nests deeper than ${MAX_METADATA_DEPTH} levels`;
    for (const child of Object.values(v)) {
      if (++entries > MAX_METADATA_ENTRIES) return `has more than ${MAX_METADATA_ENTRIES} keys and array items in all`;
      stack.push({ v: child, depth: depth + 1 });
    }
  }
  const bytes = new TextEncoder().encode(JSON.stringify(metadata)).length;
  return bytes > MAX_METADATA_BYTES ? `is larger than ${MAX_METADATA_BYTES} bytes as JSON (${bytes})` : null;
}

/** How deep stored metadata may nest and still be returned as is (well past what the RPC boundary copies). */
const READABLE_DEPTH = 64;

/**
 * Stored metadata as a listing returns it: a top-level value nested deeper than READABLE_DEPTH (a row stored
 * before metadata was bounded) is shown as "[too deep]", since copying it over RPC overflows the stack.
 */
export function readableMetadata(metadata: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    let deep = false;
    const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 2 }];
    while (stack.length > 0 && !deep) {
      const { v, depth } = stack.pop()!;
      if (v === null || typeof v !== "object") continue;
      deep = depth > READABLE_DEPTH;
      for (const child of Object.values(v)) stack.push({ v: child, depth: depth + 1 });
    }
    out[key] = deep ? "[too deep]" : value;
  }
  return out;
}

export const Metadata = z
  .record(z.string(), z.unknown())
  .superRefine((metadata, ctx) => {
    const reason = overBound(metadata);
    if (reason) ctx.addIssue({ code: "custom", message: reason });
  })
  .describe(
    `A JSON object: at most ${MAX_METADATA_DEPTH} levels deep, ${MAX_METADATA_ENTRIES} keys and array items in all, ${MAX_METADATA_BYTES} bytes as JSON`,
  );
