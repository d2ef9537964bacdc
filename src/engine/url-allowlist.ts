// TOOL_URL_ALLOWLIST: the URL prefixes that outbound tool calls may reach. Entries and URLs are compared
// parsed, not as strings: same scheme, host and port, and a path prefix that ends on a segment boundary of
// the normalized path (so "/allowed/../secret" is "/secret", and "https://a.example" does not match
// "https://a.example.evil.net"). A path holding a Unicode look-alike of a dot or slash ("．．/") is refused
// too (src/protocol/lookalikes.ts).
import { lookalikeInPath } from "../protocol/outbound-url";

export function parseAllowlist(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Encoded dots, slashes and backslashes, `;` path parameters and `%u` escapes survive URL normalization here
 * but a server (or proxy) behind may decode them into a traversal (`..%2f`, `%2e%2e/`, `..%5c`, `..;/`,
 * `%u002e`): such paths are refused, at every level of encoding (`%252e` is `%2e` once decoded).
 */
const AMBIGUOUS_PATH = /%2e|%2f|%5c|%u|;/i;
/** What a decoded path must not hold: a backslash, a NUL or another control character. */
const unsafeChar = (ch: string) => ch === "\\" || ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f;
/** Levels of percent-encoding looked through; a path still changing after that many decodings is refused. */
const MAX_DECODINGS = 4;

/** Whether a server decoding the path once or more could read a traversal or a byte the allowlist never saw. */
function unsafePath(pathname: string): boolean {
  let path = pathname;
  for (let level = 0; ; level++) {
    if (AMBIGUOUS_PATH.test(path)) return true;
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return true; // an invalid escape or invalid UTF-8, such as the overlong `%c0%af`
    }
    if (decoded === path) break;
    if (level === MAX_DECODINGS) return true;
    path = decoded;
  }
  return [...path].some(unsafeChar) || path.split("/").some((segment) => segment === "." || segment === "..");
}

function parse(url: string): URL | null {
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    if (u.username || u.password) return null;
    if (unsafePath(u.pathname) || lookalikeInPath(url) !== null) return null;
    return u;
  } catch {
    return null;
  }
}

/** Decisions per allowlist (one list per turn): a webhook tool calls the same URL again and again. */
const decided = new WeakMap<string[], Map<string, boolean>>();

export function urlAllowed(url: string, allowlist: string[]): boolean {
  let known = decided.get(allowlist);
  if (!known) {
    known = new Map();
    decided.set(allowlist, known);
  }
  let allowed = known.get(url);
  if (allowed === undefined) {
    allowed = decide(url, allowlist);
    if (known.size < 1_000) known.set(url, allowed);
  }
  return allowed;
}

function decide(url: string, allowlist: string[]): boolean {
  const target = parse(url);
  if (!target) return false;
  return allowlist.some((entry) => {
    const allowed = parse(entry);
    if (!allowed || allowed.origin !== target.origin) return false;
    const prefix = allowed.pathname;
    return prefix.endsWith("/") ? target.pathname.startsWith(prefix) : target.pathname === prefix || target.pathname.startsWith(`${prefix}/`);
  });
}
