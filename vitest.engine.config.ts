// The engine's tests (test/engine): src/engine, src/views and src/protocol with mock models, and the client's pure
// parts (src/client), nothing of Cloudflare, so they run in plain Node, without the workerd pool's start. `npm test` runs them next to the workerd suite.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { include: ["test/engine/**/*.test.ts"], environment: "node" },
});
