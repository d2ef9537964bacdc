// TOOL_URL_ALLOWLIST: the URL prefixes that outbound tool calls may reach. Entries and URLs are compared
// parsed, not as strings: same scheme, host and port, and a path prefix that ends on a segment boundary of
// the normalized path (so "/allowed/../secret" is "/secret", and "https://a.example" does not match
// "https://a.example.evil.net").

export function parseAllowlist(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Encoded dots, slashes and backslashes, and `;` path parameters, survive URL normalization here but a
 * server behind may decode them into a traversal (`..%2f`, `%2e%2e/`, `..%5c`, `..;/`): such paths are refused.
 */
const AMBIGUOUS_PATH = /%2e|%2f|%5c|;/i;

function parse(url: string): URL | null {
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    if (u.username || u.password) return null;
    if (AMBIGUOUS_PATH.test(u.pathname)) return null;
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
