// The browser tests (test/browser): Node drives Chromium against the runtime under `wrangler dev`. They
// are not workerd tests, so they have their own config; `npm test` runs them after the main suite.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/browser/**/*.browser.ts"],
    environment: "node",
    globalSetup: ["./test/browser/global-setup.ts"],
    // Two files at a time: each starts its own stack (fake model, `wrangler dev`, Chromium) on free ports with
    // its own state, profile and screenshot names, and about a third of a file's time is that start.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
