// Write-only fields (docs/guides/access-and-tokens.md): what every reader of an agent config or a subscription sees in place of a
// secret. The runtime keeps the real values for execution; every route, stream, export and page that shows a
// config shows it through these functions, for every principal, admins included.
import type { AgentConfig } from "./agent-config";

/** What a write-only value reads as. */
export const REDACTED = "[redacted]";

/** Query parameters whose name contains one of these (any case) carry a credential: api_key, access_token, sig, ... */
const CREDENTIAL_PARAM = /key|token|secret|passw|auth|sig|credential/i;
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i;

function credentialParam(pair: string): boolean {
  const name = pair.split("=", 1)[0] ?? "";
  try {
    return CREDENTIAL_PARAM.test(decodeURIComponent(name));
  } catch {
    return CREDENTIAL_PARAM.test(name);
  }
}

/**
 * The URL with its credentials replaced by the placeholder: the user info (`user:pass@`) and the value of
 * every query parameter named like a credential. Everything else is left as written, so a URL without
 * credentials comes back unchanged.
 */
export function redactUrl(url: string): string {
  const hash = url.indexOf("#");
  const fragment = hash >= 0 ? url.slice(hash) : "";
  const beforeFragment = hash >= 0 ? url.slice(0, hash) : url;
  const question = beforeFragment.indexOf("?");
  const base = (question >= 0 ? beforeFragment.slice(0, question) : beforeFragment).replace(USERINFO, `$1${REDACTED}@`);
  if (question < 0) return base + fragment;
  const query = beforeFragment
    .slice(question + 1)
    .split("&")
    .map((pair) => (pair.includes("=") && credentialParam(pair) ? `${pair.split("=", 1)[0]}=${REDACTED}` : pair))
    .join("&");
  return `${base}?${query}${fragment}`;
}

/** An MCP server or A2A agent as readers see it: its header values the placeholder, its URL's credentials too. */
function redactRemote<T extends { url: string; headers?: Record<string, string> }>(r: T): T {
  return { ...r, url: redactUrl(r.url), ...(r.headers ? { headers: Object.fromEntries(Object.keys(r.headers).map((h) => [h, REDACTED])) } : {}) };
}

/** The config as readers see it: header values, signing secrets and URL credentials are the placeholder. */
export function redactAgentConfig(config: AgentConfig): AgentConfig {
  return {
    ...config,
    http_tools: config.http_tools.map((t) => ({
      ...t,
      url: redactUrl(t.url),
      ...(t.secret !== undefined ? { secret: REDACTED } : {}),
      ...(t.previous_secret !== undefined ? { previous_secret: REDACTED } : {}),
    })),
    mcp_servers: config.mcp_servers.map(redactRemote),
    ...(config.a2a_agents ? { a2a_agents: config.a2a_agents.map(redactRemote) } : {}),
    ...(config.subscriptions
      ? { subscriptions: config.subscriptions.map((s) => ({ ...s, url: redactUrl(s.url), ...(s.secret !== undefined ? { secret: REDACTED } : {}) })) }
      : {}),
  };
}

/** Credential-shaped text: an authorization scheme's token, a key shaped like a provider's, a credential-named field's value. */
const CREDENTIAL_SHAPES: [RegExp, string][] = [
  [/\b(Bearer)\s+(?!\[redacted\])[\w.~+/=-]{6,}/gi, `$1 ${REDACTED}`],
  [/\b(Basic)\s+[A-Za-z0-9+/]{12,}={0,2}/g, `$1 ${REDACTED}`],
  [/\b(?:sk|pk|rk)-[\w-]{8,}/g, REDACTED],
  [
    /\b((?:x-)?api[-_]?key|authorization|access[-_]?token|secret|password)(["']?\s*[:=]\s*["']?)(?!Bearer\b|Basic\b|\[redacted\])[^\s"',;&]{6,}/gi,
    `$1$2${REDACTED}`,
  ],
];

/**
 * Text from outside (a provider's error message) as events may hold it: each of `secrets` (the configured
 * provider keys) and every credential-shaped string replaced by the placeholder.
 */
export function redactCredentials(text: string, secrets: readonly string[] = []): string {
  for (const secret of secrets) if (secret.length >= 8) text = text.split(secret).join(REDACTED);
  for (const [shape, replacement] of CREDENTIAL_SHAPES) text = text.replace(shape, replacement);
  return text;
}
