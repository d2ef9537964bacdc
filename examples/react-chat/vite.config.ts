// The dev server forwards /v1 to a local `npm start` of the runtime (or RUNTIME_URL), so the page and the
// API share an origin and no CORS setting is needed.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const target = process.env.RUNTIME_URL ?? "http://127.0.0.1:8787";

export default defineConfig({
  plugins: [react()],
  server: { proxy: { "/v1": { target, changeOrigin: true } } },
});
