// Tests that run in Node rather than inside workerd: they drive whole processes (wrangler, the CLI tools).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { include: ["test/node/**/*.test.ts"], globalSetup: ["./test/node/support/build-inspector.ts"], testTimeout: 120_000 },
});
