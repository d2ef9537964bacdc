// Before the browser tests: the inspector is built from the current source (what `wrangler dev` serves),
// and Chromium must be there.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { build } from "vite";
import { CHROMIUM, ROOT } from "./harness";

export default async function (): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium), as .ci/run does`);
  await build({ configFile: join(ROOT, "vite.config.ts") });
}
