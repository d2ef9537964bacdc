// Tests that run in Node rather than inside workerd: they drive whole processes (wrangler, the CLI tools).
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/node/**/*.test.ts"],
    globalSetup: ["./test/node/support/build-inspector.ts"],
    testTimeout: 120_000,
    // The files mostly wait on the processes they start (wrangler dev, npm, tsc), so one a core; Vitest's
    // default (one fewer than the cores) ran them one at a time here.
    maxWorkers: availableParallelism(),
  },
});
