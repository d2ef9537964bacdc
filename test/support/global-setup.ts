// vitest globalSetup (runs in Node, not workerd): start the fake Chat Completions server on the
// port vitest.config.ts picked and handed to the worker as OPENAI_COMPATIBLE_BASE_URL.
import { startFakeOpenAI } from "./fake-openai";

export default async function (): Promise<() => Promise<void>> {
  const port = Number(process.env.FAKE_OPENAI_PORT);
  if (!Number.isInteger(port) || port <= 0) {
    throw new Error(`FAKE_OPENAI_PORT is not set to a valid port: ${process.env.FAKE_OPENAI_PORT}`);
  }
  const server = await startFakeOpenAI(port);
  return async () => server.close();
}
