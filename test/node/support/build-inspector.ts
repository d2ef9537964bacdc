// wrangler serves the inspector's built assets (wrangler.toml [assets]) and refuses to start without them:
// build them once when they are missing (the browser suite builds them from the current source anyway).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { build } from "vite";

export default async function (): Promise<void> {
  const root = join(import.meta.dirname, "..", "..", "..");
  if (!existsSync(join(root, "dist", "inspector", "index.html"))) await build({ configFile: join(root, "vite.config.ts"), logLevel: "warn" });
}
