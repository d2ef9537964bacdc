// Code-mode scripts in Dynamic Workers: a fresh isolate per run of a script (a rerun must not see what an
// earlier run left in its globals), no network (globalOutbound null), no binding, the session reached only
// through the bridge handed to its run over RPC.
import { RpcTarget } from "cloudflare:workers";
import type { ScriptAnswer, ScriptBridge, ScriptRunner, ScriptSeen } from "../engine/tools/code-mode";
import { ToolError } from "../engine/tools/types";
import type { Env } from "../env";
import { COMPATIBILITY_DATE, within } from "./dynamic-worker";
import { scriptModules } from "./script-harness";

interface ScriptHarness {
  run(names: string[], recorded: ScriptSeen, bridge: ScriptBridge): Promise<ScriptAnswer>;
}

/** The session's side of the bridge, as an RPC target the script's isolate calls back. */
class Bridge extends RpcTarget {
  readonly #bridge: ScriptBridge;
  constructor(bridge: ScriptBridge) {
    super();
    this.#bridge = bridge;
  }
  call(name: string, argsJson: string, seen: ScriptSeen) {
    return this.#bridge.call(String(name), String(argsJson), checkedSeen(seen));
  }
}

const only = <T>(v: unknown, is: (x: unknown) => x is T): T[] => (Array.isArray(v) ? v.filter(is) : []);
const isNumber = (x: unknown): x is number => typeof x === "number";
const isString = (x: unknown): x is string => typeof x === "string";

/** What the script's isolate reported it saw, kept to the values each source can give (it is untrusted). */
function checkedSeen(seen: Partial<Record<keyof ScriptSeen, unknown>> | undefined): ScriptSeen {
  return {
    clock: only(seen?.clock, isNumber),
    random: only(seen?.random, isNumber),
    perf: only(seen?.perf, isNumber),
    uuid: only(seen?.uuid, isString),
    bytes: only(seen?.bytes, isString),
  };
}

export function scriptRunner(env: Pick<Env, "LOADER">): ScriptRunner {
  return async (run, bridge, signal) => {
    if (!env.LOADER) throw new ToolError("This deployment has no LOADER binding ([[worker_loaders]] in wrangler.toml): run_code cannot run");
    const worker = env.LOADER.get(run.id, () => ({
      compatibilityDate: COMPATIBILITY_DATE,
      mainModule: "main.js",
      modules: scriptModules(run.code),
      env: {},
      globalOutbound: null,
    }));
    const harness = worker.getEntrypoint(undefined, { limits: { cpuMs: run.limits.cpu_ms } }) as unknown as ScriptHarness;
    const answer = harness.run(run.tools, run.recorded, new Bridge(bridge)).then((a) => ({ ...a, seen: checkedSeen(a.seen) }));
    return within(answer, run.limits.timeout_ms, signal, "run_code");
  };
}
