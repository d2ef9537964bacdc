// The dev server forwards /v1 to a local `npm start` of the runtime (or RUNTIME_URL), so the page and the
// API share an origin and no CORS setting is needed.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const target = process.env.RUNTIME_URL ?? "http://127.0.0.1:8787";

export default defineConfig({
  plugins: [react()],
  server: { proxy: { "/v1": { target, changeOrigin: true } } },
  build: {
    rollupOptions: {
      // zod's sources carry comments that mention `@__PURE__` where Rollup cannot use them; Rollup drops
      // them, which changes nothing in the bundle, and says so twice per build.
      onwarn(warning, warn) {
        if (warning.code === "INVALID_ANNOTATION" && warning.id?.includes("/node_modules/zod/")) return;
        warn(warning);
      },
    },
  },
});
