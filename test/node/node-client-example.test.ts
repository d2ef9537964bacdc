// The documented way to use the client from Node 20 works: examples/node-client.ts under tsx, with the
// WebSocket flag, against a running runtime.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const ROOT = join(import.meta.dirname, "..", "..");
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: "example-key" });
}, 90_000);
afterAll(() => rt?.stop());

describe("examples/node-client.ts", () => {
  it("runs a turn on Node 20 and prints the streamed answer", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--experimental-websocket", "--import", "tsx", "examples/node-client.ts", "what is 6 * 7?"],
      {
        cwd: ROOT,
        env: { ...process.env, AGENT_RUNTIME_URL: rt.base, KEY: "example-key" },
      },
    );
    expect(stdout).toContain("The answer is 42.");
    expect(stdout.trim().endsWith("[completed]")).toBe(true);
  }, 60_000);
});
