// Child processes of the benchmark: free ports, a frozen copy of the runtime's source, `wrangler dev`
// instances and the fake model server, and the workerd process behind a wrangler instance.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** sha256 over the files of `dirs` (relative to root), to record which source was measured. */
export function treeHash(root, dirs) {
  const h = createHash("sha256");
  const walk = (rel) => {
    const abs = join(root, rel);
    if (statSync(abs).isDirectory()) for (const name of readdirSync(abs).sort()) walk(join(rel, name));
    else h.update(rel).update("\0").update(readFileSync(abs)).update("\0");
  };
  for (const d of dirs) if (existsSync(join(root, d))) walk(d);
  return h.digest("hex").slice(0, 16);
}

/**
 * Copies src/, migrations/ and wrangler.toml to `dest`, so that edits made to the working tree while the
 * benchmark runs neither reload the worker mid-measurement nor change what is measured. Imports of
 * packages still resolve to the repository's node_modules (dest is inside the repository).
 */
export function snapshotRuntime(root, dest) {
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  for (const d of ["src", "migrations"]) cpSync(join(root, d), join(dest, d), { recursive: true });
  cpSync(join(root, "wrangler.toml"), join(dest, "wrangler.toml"));
  // wrangler.toml's [assets] directory (the built inspector) must exist beside it; the benchmark needs no page.
  mkdirSync(join(dest, "dist", "inspector"), { recursive: true });
  return join(dest, "wrangler.toml");
}

/** The processes below `pid`, as {pid, comm}. */
export function descendants(pid) {
  const children = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push({ pid: Number(name), comm });
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const c of children.get(queue.shift()) ?? []) {
      out.push(c);
      queue.push(c.pid);
    }
  }
  return out;
}

/** TCP ports a process listens on (from /proc: its socket inodes matched against /proc/<pid>/net/tcp). */
export function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (link.startsWith("socket:[")) inodes.add(link.slice(8, -1));
    } catch {
      // closed meanwhile
    }
  }
  return readFileSync(`/proc/${pid}/net/tcp`, "utf8")
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[3] === "0A" && inodes.has(f[9]))
    .map((f) => parseInt(f[1].split(":")[1], 16));
}

/** VmRSS and VmHWM of a process, in bytes. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/**
 * CPU time a process has used so far, in ms: the sum of its threads' run time from schedstat (nanoseconds; the
 * utime and stime of /proc/PID/stat count 10 ms ticks, too coarse for a turn of a few ms). Threads that have
 * exited are not counted, so compare readings of long-lived processes only.
 */
export function cpuMsOf(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ns / 1e6;
}

const live = new Set();

/** Starts `npx wrangler dev` and resolves once `readyPath` answers. Its output goes to `logFile`'s stream. */
export async function startWrangler({ cwd, config, port, inspectorPort, persistTo, vars, readyPath, log, label }) {
  const args = ["wrangler", "dev", "-c", config, "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspectorPort)];
  args.push("--persist-to", persistTo, "--show-interactive-dev-session=false", "--log-level", "warn");
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child = spawn("npx", args, {
    cwd,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", FORCE_COLOR: "0" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, so stop() ends exactly what it started
  });
  live.add(child);
  child.stdout.on("data", (d) => log(`[${label}] ${d}`));
  child.stderr.on("data", (d) => log(`[${label}] ${d}`));
  let exited = null;
  child.on("exit", (code) => {
    exited = code;
    live.delete(child);
  });
  const url = `http://127.0.0.1:${port}${readyPath}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exited !== null) throw new Error(`${label}: wrangler dev exited with ${exited} before it was ready (see the log)`);
    if (Date.now() > deadline) throw new Error(`${label}: wrangler dev not ready after 120 s`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status < 500) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  // wrangler dev runs two workerd processes: a proxy on the public port, and the one running the worker.
  const all = descendants(child.pid).filter((p) => p.comm === "workerd");
  const isProxy = (pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`entry=127.0.0.1:${port}`);
  const proxyPid = all.find((p) => isProxy(p.pid))?.pid ?? null;
  const userPid = all.find((p) => !isProxy(p.pid))?.pid ?? null;
  // The worker's own entry socket, which serves the same requests without the proxy hop.
  let direct = null;
  if (userPid) {
    for (const p of listeningPorts(userPid)) {
      try {
        const res = await fetch(`http://127.0.0.1:${p}${readyPath}`);
        await res.arrayBuffer();
        if (res.status === 200) {
          direct = `http://127.0.0.1:${p}`;
          break;
        }
      } catch {
        // not an HTTP entry
      }
    }
  }
  return { child, base: `http://127.0.0.1:${port}`, direct, proxyPid, userPid, inspectorPort, persistTo, stop: () => stopChild(child) };
}

/**
 * A bench worker of its own (`bench/<name>/wrangler.toml`) under `wrangler dev` on a fresh state directory;
 * `get(path)` is a GET answered with JSON (a non-2xx throws), `dispose()` stops every process and removes the state.
 */
export async function startBenchWorker(root, name) {
  const tmp = mkdtempSync(join(tmpdir(), `agent-runtime-bench-${name}-`));
  const w = await startWrangler({
    cwd: root,
    config: join(root, "bench", name, "wrangler.toml"),
    port: await freePort(),
    inspectorPort: await freePort(),
    persistTo: join(tmp, "state"),
    vars: {},
    readyPath: "/healthz",
    log: (line) => process.env.BENCH_VERBOSE && process.stderr.write(line),
    label: name,
  });
  const get = async (path) => {
    const res = await fetch(`${w.base}${path}`, { signal: AbortSignal.timeout(300_000) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const dispose = async () => {
    await stopAll();
    rmSync(tmp, { recursive: true, force: true });
  };
  return { get, dispose };
}

export function stopChild(child) {
  // Whatever of its process group outlives it (a workerd stuck in a busy loop ignores SIGTERM) is killed.
  const killGroup = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  if (child.exitCode !== null || child.signalCode !== null) {
    killGroup();
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      killGroup();
      resolve();
    }, 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      setTimeout(() => {
        killGroup();
        resolve();
      }, 200);
    });
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

/** Starts the fake model server as its own Node process (so the client's work does not delay it). */
export async function startFakeLlmProcess(script, port, log) {
  const child = spawn(process.execPath, [script, String(port)], { stdio: ["ignore", "pipe", "pipe"], detached: true });
  live.add(child);
  child.on("exit", () => live.delete(child));
  child.stderr.on("data", (d) => log(`[fake-llm] ${d}`));
  await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`fake model server exited with ${code}`)));
    child.stdout.on("data", (d) => {
      if (String(d).includes("listening")) resolve();
    });
  });
  return { child, pid: child.pid, stop: () => stopChild(child) };
}

/** Waits until the given processes stop using CPU (no tick in `quietMs`), at most `maxMs`. */
export async function settle(pids, { quietMs = 300, maxMs = 15_000 } = {}) {
  const t0 = Date.now();
  const read = () =>
    pids.map((p) => {
      try {
        return cpuMsOf(p);
      } catch {
        return 0;
      }
    });
  let last = read();
  while (Date.now() - t0 < maxMs) {
    await new Promise((r) => setTimeout(r, quietMs));
    const now = read();
    if (now.every((v, i) => v - last[i] <= 10)) return Date.now() - t0;
    last = now;
  }
  return Date.now() - t0;
}

/** Stops every child still running (on exit or interrupt). */
export async function stopAll() {
  await Promise.all([...live].map((c) => stopChild(c)));
}
