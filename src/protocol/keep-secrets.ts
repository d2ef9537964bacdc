// A config sent back as it was read (GET, edit, PUT): its placeholders take the stored secrets, so that the
// placeholder itself is never stored nor sent to a server. Tools and MCP servers are matched by name (a
// webhook tool's signing secrets too),
// subscriptions by URL; a placeholder with nothing stored to stand for is refused.
import type { AgentConfig } from "./agent-config";
import { own } from "./own-key";
import { REDACTED, redactUrl } from "./redact";

type Json = Record<string, unknown>;
export interface SecretIssue {
  path: string;
  reason: string;
}

const NO_STORED_VALUE = `is the placeholder "${REDACTED}" of a stored secret, but nothing stored matches it: give the value itself`;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Returns `input` with the stored values in place of placeholders, and an issue for each placeholder left. */
export function keepStoredSecrets(input: unknown, stored: AgentConfig | null, prefix = ""): { input: unknown; issues: SecretIssue[] } {
  if (!isObject(input)) return { input, issues: [] };
  const issues: SecretIssue[] = [];
  const at = (...path: (string | number)[]) => [prefix, ...path].filter((p) => p !== "").join(".");
  /** The stored URL when `url` is its read form; `url` itself when it holds no placeholder. */
  const keepUrl = (url: unknown, storedUrl: string | undefined, path: string): unknown => {
    if (typeof url !== "string" || !url.includes(REDACTED)) return url;
    if (storedUrl !== undefined && redactUrl(storedUrl) === url) return storedUrl;
    issues.push({ path, reason: NO_STORED_VALUE });
    return url;
  };
  /** The stored secret when `value` is its placeholder. */
  const keepSecret = (value: unknown, stored: string | undefined, path: string): unknown => {
    if (value !== REDACTED) return value;
    if (stored === undefined) issues.push({ path, reason: NO_STORED_VALUE });
    return stored ?? value;
  };
  /** An MCP server or A2A agent with the stored header values and URL of the one of its name in place of placeholders. */
  const keepRemote = (
    item: Json,
    storedList: { name: string; url: string; headers?: Record<string, string> }[] | undefined,
    field: string,
    i: number,
  ): Json => {
    const match = storedList?.find((s) => s.name === item.name);
    const headers = isObject(item.headers)
      ? Object.fromEntries(
          Object.entries(item.headers).map(([name, value]) => [name, keepSecret(value, own(match?.headers, name), at(field, i, "headers", name))]),
        )
      : item.headers;
    return { ...item, url: keepUrl(item.url, match?.url, at(field, i, "url")), ...(headers !== undefined ? { headers } : {}) };
  };
  const list = (field: string, keep: (item: Json, i: number) => Json) =>
    Array.isArray(input[field]) ? { [field]: (input[field] as unknown[]).map((item, i) => (isObject(item) ? keep(item, i) : item)) } : {};

  const result = {
    ...input,
    ...list("http_tools", (tool, i) => {
      const match = stored?.http_tools.find((t) => t.name === tool.name);
      const secrets = Object.fromEntries(
        (["secret", "previous_secret"] as const)
          .filter((field) => tool[field] !== undefined)
          .map((field) => [field, keepSecret(tool[field], match?.[field], at("http_tools", i, field))]),
      );
      return { ...tool, url: keepUrl(tool.url, match?.url, at("http_tools", i, "url")), ...secrets };
    }),
    ...list("mcp_servers", (server, i) => keepRemote(server, stored?.mcp_servers, "mcp_servers", i)),
    ...list("a2a_agents", (agent, i) => keepRemote(agent, stored?.a2a_agents, "a2a_agents", i)),
    ...list("subscriptions", (sub, i) => {
      const match = stored?.subscriptions?.find((s) => s.url === sub.url || redactUrl(s.url) === sub.url);
      const kept = { ...sub, url: keepUrl(sub.url, match?.url, at("subscriptions", i, "url")) };
      return sub.secret === undefined ? kept : { ...kept, secret: keepSecret(sub.secret, match?.secret, at("subscriptions", i, "secret")) };
    }),
  };
  return { input: result, issues };
}
