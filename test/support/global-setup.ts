// vitest globalSetup (runs in Node, not workerd): start the fake Chat Completions server on the
// port vitest.config.ts picked and handed to the worker as OPENAI_COMPATIBLE_BASE_URL, and the test MCP
// server (test/support/mcp-server.ts) on MCP_TEST_PORT.
import { startFakeOpenAI } from "./fake-openai";
import { startMcpServer } from "./mcp-server";

function portFrom(name: string): number {
  const port = Number(process.env[name]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`${name} is not set to a valid port: ${process.env[name]}`);
  return port;
}

export default async function (): Promise<() => Promise<void>> {
  const server = await startFakeOpenAI(portFrom("FAKE_OPENAI_PORT"));
  const mcp = await startMcpServer(portFrom("MCP_TEST_PORT"));
  return async () => {
    await mcp.close();
    await server.close();
  };
}
