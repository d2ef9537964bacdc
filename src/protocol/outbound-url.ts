// The URLs the runtime calls out to (HTTP tools, MCP servers, webhook guardrails, subscriptions). Their paths
// must not hold a Unicode look-alike of a dot: "．．/" (U+FF0E), "․" (U+2024), "。" (U+3002), "﹒" (U+FE52),
// "｡" (U+FF61) and the like survive URL parsing as percent-escapes, so the allowlist sees a harmless segment,
// but a server or proxy that normalizes Unicode (NFKC) or maps ideographic full stops reads a "." or ".."
// segment: a traversal out of the allowlisted prefix. Such paths are refused outright.
import { z } from "zod";

/** Whether `ch` is not ASCII and normalizes (NFKC) to something holding a full stop, ASCII or ideographic. */
function dotLookalike(ch: string): boolean {
  if (ch.charCodeAt(0) < 0x80) return false;
  const normalized = ch.normalize("NFKC");
  return normalized.includes(".") || normalized.includes("\u3002");
}

/** Levels of percent-encoding looked through (as the allowlist does). */
const MAX_DECODINGS = 4;

/**
 * The first dot look-alike in the URL's path, at any level of percent-encoding, as "U+FF0E"; null when there
 * is none, or when the text is not a URL (that is refused where it is parsed).
 */
export function dotLookalikeInPath(url: string): string | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  for (let level = 0; level <= MAX_DECODINGS; level++) {
    for (const ch of path) {
      if (dotLookalike(ch)) return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return null; // an invalid escape: the allowlist refuses it
    }
    if (decoded === path) break;
    path = decoded;
  }
  return null;
}

/** The refinement every outbound URL field carries: a 422 at the field naming the look-alike. */
export function refineOutboundPath(url: string, ctx: z.RefinementCtx): void {
  const found = dotLookalikeInPath(url);
  if (found) ctx.addIssue({ code: "custom", message: `must not hold a Unicode look-alike of a dot in its path (${found})` });
}

/** An http(s) URL the runtime calls out to. */
export const outboundUrl = () => z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }).superRefine(refineOutboundPath);
