// Starts everything a benchmark run needs: the fake model server, the runtime (a frozen copy of src/)
// and the baseline worker under `wrangler dev`, each with a clean persistence directory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Api } from "./client.mjs";
import { connectInspector } from "./cpuprofile.mjs";
import { cpuMsOf, freePort, settle, snapshotRuntime, startFakeLlmProcess, startWrangler } from "./procs.mjs";

/**
 * Options: root (the repository), log (a line sink), liveSrc (run src/ in place instead of a snapshot),
 * viaProxy (talk to wrangler's public port instead of the worker's own socket), devNetwork and devConsole
 * (leave the DevTools session's Network and Runtime domains on, as `wrangler dev` sets them).
 */
export async function startStack({ root, log, liveSrc = false, viaProxy = false, devNetwork = false, devConsole = false }) {
  const key = `bench_${Math.random().toString(36).slice(2)}`;
  const tmp = mkdtempSync(join(tmpdir(), "agent-runtime-bench-"));
  const fakePort = await freePort();
  const fake = await startFakeLlmProcess(join(root, "bench", "lib", "fake-llm.mjs"), fakePort, log);
  const baseUrl = `http://127.0.0.1:${fakePort}/v1`;
  fake.baseUrl = baseUrl;
  /** The scripted server's request marks since the last call (fake-llm.mjs, GET /marks). */
  fake.marks = async () => (await fetch(`http://127.0.0.1:${fakePort}/marks`)).json();
  const config = liveSrc ? join(root, "wrangler.toml") : snapshotRuntime(root, join(root, "bench", ".cache", "runtime"));
  const [rt, bl] = await Promise.all([
    startWrangler({
      cwd: root,
      config,
      port: await freePort(),
      inspectorPort: await freePort(),
      persistTo: join(tmp, "runtime"),
      vars: {
        API_KEYS: key,
        OPENAI_COMPATIBLE_BASE_URL: baseUrl,
        TOOL_URL_ALLOWLIST: `${baseUrl}/_tools/`,
        ...(process.env.BENCH_LOGS ? { LOGS: process.env.BENCH_LOGS } : {}),
      },
      readyPath: "/healthz",
      log,
      label: "runtime",
    }),
    startWrangler({
      cwd: root,
      config: join(root, "bench", "baseline", "wrangler.toml"),
      port: await freePort(),
      inspectorPort: await freePort(),
      persistTo: join(tmp, "baseline"),
      vars: { OPENAI_COMPATIBLE_BASE_URL: baseUrl },
      readyPath: "/healthz",
      log,
      label: "baseline",
    }),
  ]);
  const inspectors = {};
  for (const [name, w] of Object.entries({ runtime: rt, baseline: bl })) {
    try {
      inspectors[name] = await connectInspector(w.inspectorPort);
      await withoutDevRelays(inspectors[name], { devNetwork, devConsole });
    } catch (err) {
      log(`inspector for ${name}: ${err}`);
    }
  }
  const pids = { runtime_workerd: rt.userPid, runtime_proxy: rt.proxyPid, baseline_workerd: bl.userPid, baseline_proxy: bl.proxyPid, fake_model: fake.pid };
  const rtBase = viaProxy || !rt.direct ? rt.base : rt.direct;
  const blBase = viaProxy || !bl.direct ? bl.base : bl.direct;
  return {
    key,
    tmp,
    fake,
    rt,
    bl,
    rtBase,
    blBase,
    api: new Api(rtBase, key),
    inspectors,
    pids,
    /** CPU ms used so far by each process (and this one, as `client`). */
    cpu() {
      const out = {};
      for (const [k, pid] of Object.entries(pids)) {
        try {
          out[k] = pid ? cpuMsOf(pid) : NaN;
        } catch {
          out[k] = NaN;
        }
      }
      const u = process.cpuUsage();
      out.client = (u.user + u.system) / 1000;
      return out;
    },
    /** Waits until the runtime's and the baseline's processes are idle. */
    settle: (opts) => settle([rt.userPid, rt.proxyPid, bl.userPid, bl.proxyPid].filter(Boolean), opts),
    async stop({ keep = false } = {}) {
      for (const i of Object.values(inspectors)) i?.close();
      await Promise.all([rt.stop(), bl.stop(), fake.stop()]);
      if (!keep) rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * `wrangler dev` keeps one DevTools session on each worker, and our inspector connection shares it. With
 * the Network domain on, every subrequest and every chunk of its body (model streams, and the SSE stream
 * the session object hands to the Worker) becomes a DevTools event relayed to wrangler's proxy process;
 * with the Runtime domain on, every console.log is relayed the same way, and the worker's thread waits
 * 2-4 ms on the inspector's lock for each line (strace: a futex after each stdout write). Production has no
 * such session, so both are switched off (BENCH_DEV_NETWORK=1 / BENCH_DEV_CONSOLE=1 keep them).
 */
export async function withoutDevRelays(inspector, { devNetwork = false, devConsole = false } = {}) {
  if (!devNetwork) await inspector.send("Network.disable");
  if (!devConsole) await inspector.send("Runtime.disable");
}

export function cpuDiff(a, b, divide = 1) {
  const out = {};
  for (const k of Object.keys(a)) out[k] = (b[k] - a[k]) / divide;
  return out;
}
