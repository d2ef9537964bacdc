// Tools of remote MCP servers (`mcp_servers`, docs/reference/configuration.md): reached over Streamable HTTP with the official SDK's
// Client, discovered at turn start (cached per session for a short while, dropped when the server says
// notifications/tools/list_changed), exposed under provider-safe names, and called with a progress token
// whose notifications reach the turn through ToolContext.progress.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, McpError, type Tool as McpTool, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
// The SDK's default validator (ajv) generates code, which Workers forbid.
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { AgentConfig, McpServerSpec } from "../../protocol/agent-config";
import { urlAllowed } from "../url-allowlist";
import { injectedArgClashes } from "./injected-args";
import { mcpPermissionClass, mcpToolName, parseMcpRef } from "./mcp-names";
import { type JsonSchema, type ToolContext, type ToolDefinition, ToolError } from "./types";

/** How long a server's tool listing is reused by later turns of the same session. */
export const MCP_TOOLS_TTL_MS = 30_000;
/** Connecting and listing tools at turn start; a server slower than this is left out of the turn. */
export const MCP_DISCOVERY_TIMEOUT_MS = 5_000;
/** A call without a response (or a progress notification, which restarts the clock) for this long fails. */
export const MCP_CALL_TIMEOUT_MS = 60_000;
/** A connection nobody used for this long is closed (its notification stream with it); the next use reconnects. */
export const MCP_IDLE_CLOSE_MS = 2 * MCP_TOOLS_TTL_MS;
const MAX_LIST_PAGES = 20;

export interface McpWarning {
  code: "mcp_server_unavailable" | "mcp_tool_not_found" | "mcp_tool_left_out";
  server: string;
  message: string;
}

export interface McpDiscovery {
  tools: ToolDefinition[];
  warnings: McpWarning[];
}

/**
 * The MCP tools an agent exposes: for each server its `tools` reference, the listed tools that match. A
 * server that cannot be reached in time, and a referenced tool the server does not offer, are left out
 * with a warning; discovery itself never fails.
 */
export async function discoverMcpTools(config: AgentConfig, connections: McpConnections): Promise<McpDiscovery> {
  const wanted = new Map<string, Set<string>>();
  for (const ref of config.tools) {
    const parsed = parseMcpRef(ref);
    if (parsed) wanted.set(parsed.server, (wanted.get(parsed.server) ?? new Set()).add(parsed.tool));
  }
  const servers = config.mcp_servers.filter((s) => wanted.has(s.name));
  const listed = await Promise.all(
    servers.map(async (server) => {
      try {
        return { server, tools: await withDeadline(connections.listTools(server), connections.discoveryTimeoutMs) };
      } catch (err) {
        return { server, error: messageOf(err) };
      }
    }),
  );
  const tools: ToolDefinition[] = [];
  const warnings: McpWarning[] = [];
  const names = new Set<string>();
  for (const entry of listed) {
    const { server } = entry;
    if (!entry.tools) {
      warnings.push({
        code: "mcp_server_unavailable",
        server: server.name,
        message: `MCP server "${server.name}" is unavailable (${entry.error}); its tools are left out of this turn`,
      });
      continue;
    }
    const want = wanted.get(server.name)!;
    const offered = new Set(entry.tools.map((t) => t.name));
    for (const tool of want) {
      if (tool !== "*" && !offered.has(tool))
        warnings.push({ code: "mcp_tool_not_found", server: server.name, message: `MCP server "${server.name}" does not offer a tool "${tool}"` });
    }
    for (const tool of entry.tools) {
      if (!want.has("*") && !want.has(tool.name)) continue;
      const def = mcpTool(server, tool, connections);
      const clashes = injectedArgClashes(def.parameters, config.injected_tool_args);
      if (names.has(def.name)) {
        warnings.push({ code: "mcp_tool_left_out", server: server.name, message: `MCP tool "${tool.name}" is left out: its name "${def.name}" is taken` });
      } else if (clashes.length > 0) {
        warnings.push({
          code: "mcp_tool_left_out",
          server: server.name,
          message: `MCP tool "${tool.name}" is left out: injected_tool_args ${clashes.join(", ")} clash with its parameters`,
        });
      } else {
        names.add(def.name);
        tools.push(def);
      }
    }
  }
  return { tools, warnings };
}

function mcpTool(server: McpServerSpec, tool: McpTool, connections: McpConnections): ToolDefinition {
  return {
    name: mcpToolName(server.name, tool.name),
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? "",
    // Passed through as the server declared it; injected args are added to a copy, as for every tool.
    parameters: tool.inputSchema as JsonSchema,
    permission_class: mcpPermissionClass(server, tool.annotations),
    parallel_safe: true,
    idempotent: false,
    mcp: { server: server.name, tool: tool.name },
    execute: (args, ctx) => callMcpTool(connections, server, tool.name, args, ctx),
  };
}

async function callMcpTool(
  connections: McpConnections,
  server: McpServerSpec,
  tool: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<unknown> {
  // The allowlist may have changed since the agent was saved.
  if (!urlAllowed(server.url, ctx.urlAllowlist)) throw new ToolError(`URL of MCP server "${server.name}" is not allowlisted`);
  let result: CallToolResult;
  try {
    result = await connections.callTool(server, tool, args, {
      signal: ctx.signal,
      onprogress: (p) => ctx.progress?.({ server: server.name, tool, progress: p.progress, total: p.total ?? null, message: p.message ?? null }),
    });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    throw new ToolError(`MCP server "${server.name}" failed the call to "${tool}": ${messageOf(err)}`);
  }
  const text = contentText(result.content ?? []);
  if (result.isError) throw new ToolError(text || `MCP tool "${tool}" reported an error`);
  if (!text && result.structuredContent !== undefined) return result.structuredContent;
  return text;
}

/** What the model sees of a result's content: its text, with other kinds of content described. */
function contentText(content: CallToolResult["content"]): string {
  return content
    .map((c) => {
      switch (c.type) {
        case "text":
          return c.text;
        case "image":
        case "audio":
          return `[${c.type}: ${c.mimeType}, ${Math.floor((c.data.length * 3) / 4)} bytes]`;
        case "resource":
          return "text" in c.resource && typeof c.resource.text === "string" ? c.resource.text : `[resource: ${c.resource.uri}]`;
        case "resource_link":
          return `[resource: ${c.uri}${c.name ? ` (${c.name})` : ""}]`;
        default:
          return JSON.stringify(c);
      }
    })
    .join("\n");
}

/** `promise`, or a failure once `ms` have passed (whatever is under way goes on; its own timeouts end it). */
async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

function messageOf(err: unknown): string {
  if (err instanceof StreamableHTTPError && err.code !== undefined) return `HTTP ${err.code}: ${err.message}`;
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

interface Connection {
  client: Promise<Client>;
  /** The server's tools, until expires_at or a list_changed notification. */
  tools: { list: McpTool[]; expires_at: number } | null;
  /** Operations under way, and the timer that closes the connection once there are none for a while. */
  busy: number;
  idle: ReturnType<typeof setTimeout> | null;
}

export interface McpConnectionsOptions {
  fetch: typeof fetch;
  /** TOOL_URL_ALLOWLIST: every request (redirects included) must stay under it. */
  urlAllowlist: string[];
  now?: () => number;
  ttlMs?: number;
  discoveryTimeoutMs?: number;
  callTimeoutMs?: number;
  idleCloseMs?: number;
}

/**
 * A session's MCP clients, one per server (URL and headers), kept connected between turns so that the
 * server can announce tools/list_changed; a connection that fails is dropped and made again on next use.
 */
export class McpConnections {
  private readonly connections = new Map<string, Connection>();
  private readonly now: () => number;

  constructor(private readonly opts: McpConnectionsOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** How long discovery waits for a server, connecting included. */
  get discoveryTimeoutMs(): number {
    return this.opts.discoveryTimeoutMs ?? MCP_DISCOVERY_TIMEOUT_MS;
  }

  /** The server's tools, from the cache while fresh. */
  async listTools(server: McpServerSpec): Promise<McpTool[]> {
    if (!urlAllowed(server.url, this.opts.urlAllowlist)) throw new Error("its URL is not under TOOL_URL_ALLOWLIST");
    const timeout = this.discoveryTimeoutMs;
    return this.withRetry(
      server,
      async (conn, client) => {
        if (conn.tools && conn.tools.expires_at > this.now()) return conn.tools.list;
        const list: McpTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const res = await client.listTools(cursor ? { cursor } : undefined, { timeout });
          list.push(...res.tools);
          cursor = res.nextCursor;
          if (!cursor) break;
        }
        conn.tools = { list, expires_at: this.now() + (this.opts.ttlMs ?? MCP_TOOLS_TTL_MS) };
        return list;
      },
      timeout,
    );
  }

  async callTool(
    server: McpServerSpec,
    name: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; onprogress: (p: { progress: number; total?: number; message?: string }) => void },
  ): Promise<CallToolResult> {
    const timeout = this.opts.callTimeoutMs ?? MCP_CALL_TIMEOUT_MS;
    return this.withRetry(
      server,
      async (_conn, client) =>
        (await client.callTool({ name, arguments: args }, undefined, {
          signal: opts.signal,
          onprogress: opts.onprogress,
          timeout,
          resetTimeoutOnProgress: true,
        })) as CallToolResult,
      Math.min(timeout, this.discoveryTimeoutMs),
    );
  }

  /** Closes every connection (their standalone notification streams included). */
  async close(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    for (const c of all) if (c.idle !== null) clearTimeout(c.idle);
    await Promise.all(all.map(async (c) => (await c.client.catch(() => null))?.close().catch(() => {})));
  }

  /**
   * Runs `fn` on the server's connection. A server that forgot the MCP session (HTTP 404, for example after
   * a restart) never saw the request, so it is run once more on a new connection. A failure of the
   * connection itself (not an MCP error answer, not a cancelled call) drops it, so the next use starts afresh.
   */
  private async withRetry<T>(server: McpServerSpec, fn: (conn: Connection, client: Client) => Promise<T>, connectTimeout: number): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const conn = this.connection(server, connectTimeout);
      conn.busy += 1;
      if (conn.idle !== null) clearTimeout(conn.idle);
      try {
        return await fn(conn, await conn.client);
      } catch (err) {
        if (!(err instanceof McpError) && !(err instanceof Error && err.name === "AbortError")) this.drop(server, conn);
        if (attempt >= 2 || !(err instanceof StreamableHTTPError && err.code === 404)) throw err;
      } finally {
        conn.busy -= 1;
        if (conn.busy === 0 && this.connections.get(this.key(server)) === conn) {
          conn.idle = setTimeout(() => this.drop(server, conn), this.opts.idleCloseMs ?? MCP_IDLE_CLOSE_MS);
        }
      }
    }
  }

  private key(server: McpServerSpec): string {
    return JSON.stringify([server.url, server.headers ?? {}]);
  }

  private connection(server: McpServerSpec, timeout: number): Connection {
    const key = this.key(server);
    const existing = this.connections.get(key);
    if (existing) return existing;
    const conn: Connection = { client: Promise.resolve(null as unknown as Client), tools: null, busy: 0, idle: null };
    conn.client = this.connect(server, conn, timeout);
    // A failed connect is reported to whoever awaits it; the map forgets it at once.
    conn.client.catch(() => this.drop(server, conn));
    this.connections.set(key, conn);
    return conn;
  }

  private async connect(server: McpServerSpec, conn: Connection, timeout: number): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers ?? {} },
      fetch: this.guardedFetch,
    });
    const client = new Client({ name: "agent-runtime", version: "0.1.0" }, { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      conn.tools = null;
    });
    // Failures of the standalone notification stream are not failures of any call; the TTL covers a lost stream.
    client.onerror = () => {};
    client.onclose = () => this.drop(server, conn);
    try {
      await client.connect(transport, { timeout });
    } catch (err) {
      await client.close().catch(() => {});
      throw err;
    }
    return client;
  }

  private drop(server: McpServerSpec, conn: Connection): void {
    const key = this.key(server);
    if (this.connections.get(key) !== conn) return;
    this.connections.delete(key);
    if (conn.idle !== null) clearTimeout(conn.idle);
    void conn.client.then((c) => c.close()).catch(() => {});
  }

  /** Every request the SDK makes, redirects it follows included, must stay under the allowlist. */
  private readonly guardedFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    if (!urlAllowed(url, this.opts.urlAllowlist)) return Promise.reject(new Error(`${url} is not under TOOL_URL_ALLOWLIST`));
    return this.opts.fetch(input, init);
  };
}
