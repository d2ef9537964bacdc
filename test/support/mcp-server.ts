// A real MCP server for the tests, built with the official SDK and run in Node by vitest's globalSetup
// (next to the fake Chat Completions server). It speaks Streamable HTTP with sessions at /mcp/<space>:
// each space is an isolated copy with the same tools, its own added tools and its own call log, so test
// files running at the same time never see each other's changes.
//
//   count         reports progress `to` times (default 3), then answers "counted to N"
//   explode       answers with an MCP error payload (isError) "the widget exploded"
//   delete_file   destructiveHint: true
//   notes.search  readOnlyHint: true (a name the runtime must make provider-safe)
//
// Control routes for the tests: POST /mcp/<space>/_add_tool {name} registers a tool on every live session
// of the space (each is told with notifications/tools/list_changed); GET /mcp/<space>/_calls lists the
// tool calls received; GET /mcp/<space>/_lists counts tools/list requests; POST /mcp/<space>/_break makes
// every later tools/call of the space fail with HTTP 500.

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

interface CallRecord {
  tool: string;
  args: unknown;
  progress_token: boolean;
  header: string | null;
}

interface Space {
  servers: Set<McpServer>;
  added: string[];
  calls: CallRecord[];
  lists: number;
  broken: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startMcpServer(port: number): Promise<{ close(): Promise<void> }> {
  const spaces = new Map<string, Space>();
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; space: Space }>();
  const spaceOf = (name: string): Space => {
    let s = spaces.get(name);
    if (!s) spaces.set(name, (s = { servers: new Set(), added: [], calls: [], lists: 0, broken: false }));
    return s;
  };

  function buildServer(space: Space): McpServer {
    const server = new McpServer({ name: "test-mcp", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
    const record = (tool: string, args: unknown, extra: { _meta?: { progressToken?: unknown }; requestInfo?: { headers: Record<string, unknown> } }) =>
      space.calls.push({
        tool,
        args,
        progress_token: extra._meta?.progressToken !== undefined,
        header: (extra.requestInfo?.headers["x-test-header"] as string | undefined) ?? null,
      });

    server.registerTool(
      "count",
      {
        description: "Counts to `to`, reporting progress at every step.",
        inputSchema: { to: z.number().int().min(1).max(10).optional().describe("how far to count (default 3)") },
      },
      async (args, extra) => {
        record("count", args, extra);
        const to = args.to ?? 3;
        for (let i = 1; i <= to; i++) {
          await sleep(20);
          const token = extra._meta?.progressToken;
          if (token !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: i, total: to, message: `step ${i} of ${to}` },
            });
          }
        }
        return { content: [{ type: "text", text: `counted to ${to}` }] };
      },
    );
    server.registerTool("explode", { description: "Always fails.", inputSchema: {} }, async (args, extra) => {
      record("explode", args, extra);
      return { content: [{ type: "text", text: "the widget exploded" }], isError: true };
    });
    server.registerTool(
      "delete_file",
      { description: "Deletes a file.", inputSchema: { path: z.string() }, annotations: { destructiveHint: true } },
      async (args, extra) => {
        record("delete_file", args, extra);
        return { content: [{ type: "text", text: `deleted ${args.path}` }] };
      },
    );
    server.registerTool(
      "notes.search",
      { description: "Searches the notes.", inputSchema: { query: z.string().describe("words to look for") }, annotations: { readOnlyHint: true } },
      async (args, extra) => {
        record("notes.search", args, extra);
        return { content: [{ type: "text", text: `no notes about ${args.query}` }] };
      },
    );
    for (const name of space.added) addTool(server, space, name);
    return server;
  }

  function addTool(server: McpServer, space: Space, name: string): void {
    server.registerTool(name, { description: `Added later: ${name}.`, inputSchema: {} }, async (args, extra) => {
      space.calls.push({ tool: name, args, progress_token: extra._meta?.progressToken !== undefined, header: null });
      return { content: [{ type: "text", text: `${name} ran` }] };
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/mcp\/([A-Za-z0-9_-]+)(\/_add_tool|\/_calls|\/_lists|\/_break)?$/.exec(url.pathname);
    if (!match) return send(res, 404, { error: "not found" });
    if (match[1]!.startsWith("hang")) return; // a server that never answers: the request stays open until the client gives up
    const space = spaceOf(match[1]!);
    const control = match[2];
    if (control === "/_calls") return send(res, 200, space.calls);
    if (control === "/_lists") return send(res, 200, { lists: space.lists });
    if (control === "/_break") {
      space.broken = true;
      return send(res, 200, { ok: true });
    }
    if (control === "/_add_tool") {
      const { name } = JSON.parse(await readBody(req)) as { name: string };
      space.added.push(name);
      for (const server of space.servers) addTool(server, space, name);
      return send(res, 200, { ok: true });
    }

    const sessionId = req.headers["mcp-session-id"];
    const body = req.method === "POST" ? parse(await readBody(req)) : undefined;
    const methods = (Array.isArray(body) ? body : [body]).map((m) => (m as { method?: string } | undefined)?.method);
    if (methods.includes("tools/list")) space.lists += 1;
    if (space.broken && methods.includes("tools/call")) return send(res, 500, { error: "the server is broken" });
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session) return send(res, 404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      return send(res, 400, { jsonrpc: "2.0", error: { code: -32000, message: "No session" }, id: null });
    }
    const server = buildServer(space);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, space });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      space.servers.delete(server);
    };
    space.servers.add(server);
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) send(res, 500, { error: String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    close: async () => {
      for (const { transport } of sessions.values()) await transport.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
