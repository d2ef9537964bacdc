// Unicode look-alikes of a dot or a slash: "．．/" (U+FF0E), "․" (U+2024), "。" (U+3002), "﹒" (U+FE52), "｡" (U+FF61),
// "／" (U+FF0F), "＼" (U+FF3C) and the like. A check that reads ASCII sees a harmless name, but anything that
// normalizes Unicode (NFKC) or maps ideographic full stops reads a "." or ".." segment or a separator: a
// traversal. Outbound URLs (outbound-url.ts) and workspace paths (workspace-path.ts) refuse them.

/** Slashes that no normalization maps to "/" or "\", but that render as one. */
const SLASHES = new Set(["\u2044", "\u2215", "\u29F8", "\u29F9"]);

/** Whether `ch` is not ASCII and reads as a full stop (ASCII or ideographic) or a slash. */
function lookalike(ch: string): boolean {
  if (ch.charCodeAt(0) < 0x80) return false;
  if (SLASHES.has(ch)) return true;
  const normalized = ch.normalize("NFKC");
  return /[./\\\u3002]/.test(normalized);
}

/** `ch` as "U+FF0E", for messages naming a character that may not render. */
export const codePointLabel = (ch: string): string => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** Levels of percent-encoding looked through (as the URL allowlist does). */
const MAX_DECODINGS = 4;

/**
 * The first look-alike of a dot or slash in `text`, at any level of percent-encoding, as "U+FF0E"; null when
 * there is none or an escape is invalid (the callers refuse those on their own).
 */
export function dotOrSlashLookalike(text: string): string | null {
  for (let level = 0; level <= MAX_DECODINGS; level++) {
    for (const ch of text) {
      if (lookalike(ch)) return codePointLabel(ch);
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      return null;
    }
    if (decoded === text) break;
    text = decoded;
  }
  return null;
}

/** The reason a field holding one is refused. */
export function lookalikeReason(codepoint: string, where: string): string {
  return `must not hold a Unicode look-alike of a dot or slash${where} (${codepoint})`;
}
