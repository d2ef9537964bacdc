// Builds the web inspector (web/inspector) into dist/inspector, the Worker's static assets (wrangler.toml
// [assets]). The page is served at /inspect/*: index.html sits at the root of the assets (what
// not_found_handling = "single-page-application" serves for any path under /inspect) and its scripts under
// /inspect/assets/.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

export default defineConfig({
  root: fileURLToPath(new URL("./web/inspector", import.meta.url)),
  base: "/",
  publicDir: "public",
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("./dist/inspector", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "inspect/assets",
    target: "es2022",
    // The CSP allows no inline script, so the preload polyfill must not be inlined either (it is not needed by the browsers ES2022 targets anyway).
    modulePreload: { polyfill: false },
  },
});
