// Before the browser tests: the inspector is built from the current source (what `wrangler dev` serves),
// the example front end is installed (its own dependencies, first run only) and built, and Chromium must be there.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { build } from "vite";
import { CHROMIUM, EXAMPLE, ROOT } from "./harness";

export default async function (): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium), as .ci/run does`);
  await build({ configFile: join(ROOT, "vite.config.ts") });
  // npm says only errors, so the run's output is the results.
  const npm = (args: string[], env = process.env) =>
    execFileSync("npm", [...args, "--loglevel=error"], { cwd: EXAMPLE, stdio: ["ignore", "ignore", "inherit"], env });
  if (!existsSync(join(EXAMPLE, "node_modules"))) npm(["ci", "--no-audit", "--no-fund"]);
  // A production build, as a user's: under vitest NODE_ENV is "test", which would bundle React's development
  // build (and pass Vite's 500 kB warning).
  npm(["run", "build"], { ...process.env, NODE_ENV: "production" });
}
