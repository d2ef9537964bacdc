// An app that imports `agent-runtime/client` type-checks (strict, DOM lib) without pulling any server code
// into its program: only src/client/, src/protocol/ and src/views/ files, never src/engine/, src/session/, src/objects/ or src/routes/.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

describe("agent-runtime/client for a consumer", () => {
  it("type-checks a strict DOM app whose program holds no server file", async () => {
    const { stdout } = await promisify(execFile)("npx", ["tsc", "-p", "test/node/consumer", "--listFiles"], { cwd: ROOT });
    const ours = stdout.split("\n").filter((f) => f.startsWith(join(ROOT, "src")));
    expect(ours.length).toBeGreaterThan(5);
    expect(ours.filter((f) => !/\/src\/(client|protocol|views)\//.test(f))).toEqual([]);
    expect(ours).toContain(join(ROOT, "src", "client", "index.ts"));
  }, 60_000);
});
