// The URLs the runtime calls out to (HTTP tools, MCP servers, webhook guardrails, subscriptions). Their paths
// must not hold a Unicode look-alike of a dot or slash (lookalikes.ts): they survive URL parsing as
// percent-escapes, so the allowlist sees a harmless segment, but a server or proxy that normalizes Unicode
// reads a "." or ".." segment: a traversal out of the allowlisted prefix. Such paths are refused outright.
import { z } from "zod";
import { dotOrSlashLookalike, lookalikeReason } from "./lookalikes";

/**
 * The first look-alike of a dot or slash in the URL's path, at any level of percent-encoding, as "U+FF0E";
 * null when there is none, or when the text is not a URL (that is refused where it is parsed).
 */
export function lookalikeInPath(url: string): string | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  return dotOrSlashLookalike(path);
}

/** The refinement every outbound URL field carries: a 422 at the field naming the look-alike. */
export function refineOutboundPath(url: string, ctx: z.RefinementCtx): void {
  const found = lookalikeInPath(url);
  if (found) ctx.addIssue({ code: "custom", message: lookalikeReason(found, " in its path") });
}

/** An http(s) URL the runtime calls out to. */
export const outboundUrl = () => z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }).superRefine(refineOutboundPath);
