// Tests that run in Node rather than inside workerd: they drive whole processes (wrangler, the CLI tools).
// Those processes spend most of their time waiting (starting, restarting, timers), so the files run three at a
// time; two run alone afterwards. stream-keepalive.test.ts asserts that clients going away make workerd print
// nothing, and workerd under another file's load printed "Network connection lost" for a cut stream it was
// still writing (CONTRIBUTING.md). tenant-new.test.ts runs the deploy script, which builds the inspector
// again into the dist/ that every other file's `wrangler dev` serves: a docs example running meanwhile failed.
import { defineConfig } from "vitest/config";

const ALONE = ["test/node/stream-keepalive.test.ts", "test/node/tenant-new.test.ts"];

export default defineConfig({
  test: {
    globalSetup: ["./test/node/support/build-inspector.ts", "./test/node/support/worker-bundle.ts"],
    testTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "node", include: ["test/node/**/*.test.ts"], exclude: ALONE, maxWorkers: 3, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "node-alone", include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
