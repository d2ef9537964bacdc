// The engine's tests (test/engine): src/engine, src/views and src/protocol with mock models, and the client's pure
// parts (src/client), nothing of Cloudflare, so they run in plain Node, without the workerd pool's start. `npm test` runs them next to the workerd suite.
import { defineConfig } from "vitest/config";

// `isolate: false`: each worker imports the modules once for all its files, where importing them again for each
// file was most of the lane (22 s became 9 s here, 15 s of CPU 6 s). The files share no state: a spy is restored
// in the test that made it, and nothing sets process.env or globals; they pass in any order (`--sequence.shuffle`).
export default defineConfig({
  test: { include: ["test/engine/**/*.test.ts"], environment: "node", isolate: false },
});
