// Types `env` from "cloudflare:test" as the runtime's bindings.
import type { Env as RuntimeEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends RuntimeEnv {}
  }
}
