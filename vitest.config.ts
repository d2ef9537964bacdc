import { availableParallelism } from "node:os";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { freePort } from "./test/node/support/wrangler-dev.ts";

// The fake Chat Completions server (test/support/fake-openai.ts) listens on this port;
// global-setup starts it, and the worker reaches it through the openai-compatible provider.
// The test MCP server (test/support/mcp-server.ts) listens on a second port; a third, where nothing
// listens, stands for an MCP server that is down. Both are on the tool URL allowlist.

// Every package (and subpath) that src/ and the workerd tests import, prebundled once per run: a test file then
// loads each as one module instead of its hundreds (zod, the AI SDK, OpenTelemetry, the MCP SDK). Each file
// loads the worker in a fresh workerd; this cut the CPU of a batch of small files by about a quarter
// (CONTRIBUTING.md). A package left out still works, loaded file by file.
const PREBUNDLED = [
  ...["zod", "ai", "croner", "re2js", "workers-ai-provider", "@cfworker/json-schema", "@hono/zod-openapi"],
  ...["hono", "hono/jwt", "hono/http-exception", "hono/cors", "hono/combine", "hono/body-limit"],
  ...["@ai-sdk/provider", "@ai-sdk/provider-utils", "@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/openai-compatible"],
  ...["@opentelemetry/api", "@opentelemetry/resources", "@opentelemetry/sdk-trace", "@opentelemetry/otlp-transformer"],
  ...["client/index.js", "client/streamableHttp.js", "server/mcp.js", "server/webStandardStreamableHttp.js", "types.js", "validation/cfworker"].map(
    (path) => `@modelcontextprotocol/sdk/${path}`,
  ),
];

export default defineConfig(async () => {
  const port = Number(process.env.FAKE_OPENAI_PORT ?? (await freePort()));
  process.env.FAKE_OPENAI_PORT = String(port);
  const mcpPort = Number(process.env.MCP_TEST_PORT ?? (await freePort()));
  process.env.MCP_TEST_PORT = String(mcpPort);
  const downPort = await freePort();
  return {
    logLevel: "error",
    plugins: [
      cloudflareTest({
        // Not verbose: workerd's stack traces of objects that tests abort on purpose are expected.
        verbose: false,
        wrangler: { configPath: "./wrangler.toml" },
        // The runtime as a tenant's Worker makes it (createRuntime), with in-process tools for the tests.
        main: "./test/support/worker.ts",
        miniflare: {
          bindings: {
            API_KEYS: "test-key,second-key,operator-key:operator,read-key:read",
            TOKEN_SIGNING_SECRET: "test-signing-secret",
            MAX_SOCKETS_PER_SESSION: "10",
            LOGS: "off",
            TEST_HOOKS: "1",
            // Agent configs cached for a minute, so the test counting registry reads does not depend on timing.
            AGENT_CACHE_SECONDS: "60",
            // Scripted models named priced-* cost 1000 USD per million tokens (0.015 USD for the fake's 10 + 5 tokens).
            // Models named cache-* cost the same, and 100 USD per million input tokens read from the prompt cache.
            MODEL_PRICES: JSON.stringify({ "priced-": { input: 1000, output: 1000 }, "cache-": { input: 1000, output: 1000, cached_input: 100 } }),
            // Scripted models named text-only-* take no images (model-capabilities.ts).
            MODEL_CAPABILITIES: JSON.stringify({ "text-only-": { images: false } }),
            OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${port}/v1`,
            // anthropic: models answer from the fake Messages API (test/support/fake-anthropic.ts) on the same server.
            ANTHROPIC_API_KEY: "test-anthropic-key",
            ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}/anthropic/v1`,
            TOOL_URL_ALLOWLIST: `http://127.0.0.1:${port}/,http://127.0.0.1:${mcpPort}/mcp/,http://127.0.0.1:${downPort}/`,
            MCP_TEST_BASE_URL: `http://127.0.0.1:${mcpPort}/mcp`,
            MCP_DOWN_URL: `http://127.0.0.1:${downPort}/mcp`,
            CORS_ORIGINS: "https://app.example",
            WS_MAX_UNACKED_EVENTS: "300",
            // A turn paused by a quota looks again every 200 ms here (default 10 s).
            QUOTA_RECHECK_MS: "200",
            // Subscriptions retry fast here: 50 ms doubling, failing after 5 attempts, 500 ms per request.
            SUBSCRIPTION_RETRY_BASE_MS: "50",
            SUBSCRIPTION_MAX_ATTEMPTS: "5",
            SUBSCRIPTION_TIMEOUT_MS: "500",
            // Small file limits, so the tests reach them: 2 MiB a file, 3 MiB and 25 files a session.
            FILES_MAX_BYTES: "2097152",
            FILES_MAX_SESSION_BYTES: "3145728",
            FILES_MAX_SESSION_FILES: "25",
            // test/routes/fuzz.test.ts: how many requests, from which seed (FUZZ_REQUESTS=10000 for the full run).
            FUZZ_REQUESTS: process.env.FUZZ_REQUESTS ?? "",
            FUZZ_SEED: process.env.FUZZ_SEED ?? "",
          },
        },
      }),
    ],
    test: {
      deps: { optimizer: { ssr: { enabled: true, include: PREBUNDLED } } },
      globalSetup: ["./test/support/global-setup.ts"],
      // test/node/ runs in Node (vitest.node.config.ts): it drives whole processes; so does test/engine/
      // (vitest.engine.config.ts): the engine imports nothing of Cloudflare.
      include: ["test/**/*.test.ts"],
      exclude: ["test/node/**", "test/engine/**", "**/node_modules/**", "examples/**", "bench/**"],
      // Two workerds a core (the tests wait on timers and sockets much of the time), each running its files one
      // after another with the worker loaded once: starting a workerd and loading the worker for every file was
      // about half the lane's CPU (CONTRIBUTING.md). Files share their workerd's storage, so a test that changes
      // what every session sees (a quota without an id, one on the test key) undoes it before it ends.
      maxWorkers: 2 * availableParallelism(),
      isolate: false,
      testTimeout: 20000,
    },
  };
});
