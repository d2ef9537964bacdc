// A JavaScript CPU profile of the worker's isolate through the inspector port of `wrangler dev`
// (Chrome DevTools Protocol: Profiler.start / Profiler.stop), attributed to the bundled modules.
//
// esbuild marks each module of the bundle with a `// <path>` comment line; a sample's line number in
// the bundle is mapped to the last such marker above it, so self time can be summed per module
// (src/session/store/session-store.ts, node_modules/ai/..., ...) and per function.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const WS = (() => {
  try {
    return require("ws");
  } catch {
    return globalThis.WebSocket;
  }
})();

export async function connectInspector(inspectorPort) {
  const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error("no inspector target");
  const ws = new WS(url, { maxPayload: 1 << 30 });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let id = 0;
  const pending = new Map();
  const scripts = new Map();
  ws.on("message", (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(msg.error.message));
      else resolve(msg.result);
    } else if (msg.method === "Debugger.scriptParsed") {
      scripts.set(msg.params.scriptId, msg.params);
    }
  });
  const send = (method, params = {}, timeoutMs = 30_000) =>
    new Promise((resolve, reject) => {
      const i = ++id;
      const timer = setTimeout(() => {
        pending.delete(i);
        reject(new Error(`inspector: no answer to ${method}`));
      }, timeoutMs);
      pending.set(i, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      ws.send(JSON.stringify({ id: i, method, params }));
    });
  return { send, scripts, close: () => ws.close() };
}

/** Maps bundle line numbers to module paths from esbuild's `// path` markers. */
export function moduleMap(source) {
  const lines = source.split("\n");
  const starts = [];
  const marker = /^\/\/ ((?:\.\.\/)*[\w@.+-][\w@.+/-]*\.(?:m?[jt]sx?|cjs|json|sql))$/;
  lines.forEach((l, i) => {
    const m = marker.exec(l);
    if (m) starts.push([i, m[1].replace(/^(\.\.\/)+/, "")]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "(bundle prelude)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= line) {
        found = starts[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** Groups a module path: our own files stay whole, packages collapse to their name. */
export function groupOf(path) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (m) return m[1];
  return path;
}

/**
 * Self time per module, per package and per function, and inclusive time per function (a sample counts
 * once for every distinct function on its stack), from a CDP profile.
 */
export function summarize(profile, lineToModule) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const total = [...dt.values()].reduce((a, b) => a + b, 0);
  const moduleOf = (cf) => {
    if (cf.url && lineToModule[cf.scriptId]) return lineToModule[cf.scriptId](cf.lineNumber);
    if (cf.url) return cf.url;
    return cf.functionName.startsWith("(") ? cf.functionName : `(native) ${cf.functionName || "anonymous"}`;
  };
  const keyOf = (cf) => `${cf.functionName || "(anonymous)"} @ ${moduleOf(cf)}${cf.url ? `:${cf.lineNumber + 1}` : ""}`;
  const byModule = new Map();
  const byGroup = new Map();
  const byFn = new Map();
  const inclusive = new Map();
  const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
  for (const [id, us] of dt) {
    const cf = nodes.get(id).callFrame;
    const mod = moduleOf(cf);
    add(byModule, mod, us);
    add(byGroup, groupOf(mod), us);
    add(byFn, keyOf(cf), us);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const c = nodes.get(cur).callFrame;
      if (!c.url) continue;
      const k = keyOf(c);
      if (seen.has(k)) continue;
      seen.add(k);
      add(inclusive, k, us);
    }
  }
  const top = (m, n, filter = () => true) =>
    [...m.entries()]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => ({ name: k, ms: us / 1000, pct: (100 * us) / total }));
  const idle = byGroup.get("(idle)") ?? 0;
  return {
    total_ms: total / 1000,
    busy_ms: (total - idle) / 1000,
    by_group: top(byGroup, 30),
    by_module: top(byModule, 40),
    by_function: top(byFn, 40),
    inclusive: top(inclusive, 40),
    inclusive_src: top(inclusive, 30, (k) => / @ src\//.test(k)),
  };
}

/** Starts profiling on an open inspector connection; stop() resolves with the summary and the raw profile. */
export async function startProfile(insp, { intervalUs = 200 } = {}) {
  await insp.send("Debugger.enable");
  await insp.send("Profiler.enable");
  await insp.send("Profiler.setSamplingInterval", { interval: intervalUs });
  await insp.send("Profiler.start");
  return {
    async stop() {
      const { profile } = await insp.send("Profiler.stop");
      const lineToModule = {};
      const ids = new Set(profile.nodes.map((n) => n.callFrame.scriptId).filter((s) => s && s !== "0"));
      for (const id of ids) {
        try {
          const { scriptSource } = await insp.send("Debugger.getScriptSource", { scriptId: id });
          lineToModule[id] = moduleMap(scriptSource);
        } catch {
          // not a bundle
        }
      }
      await insp.send("Debugger.disable").catch(() => {});
      await insp.send("Profiler.disable").catch(() => {});
      return { summary: summarize(profile, lineToModule), profile };
    },
  };
}

/**
 * The isolate's JS heap (Runtime.getHeapUsage) after a full garbage collection. workerd does not answer
 * HeapProfiler.collectGarbage, so a heap snapshot (which collects garbage first) is taken and discarded.
 */
export async function heapAfterGc(insp) {
  await insp.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false, captureNumericValue: false }, 120_000).catch(() => {});
  return insp.send("Runtime.getHeapUsage");
}
