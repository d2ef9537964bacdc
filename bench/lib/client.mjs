// The benchmark's client side: the runtime's HTTP API, WebSocket and SSE subscribers, and statistics.
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

const require = createRequire(import.meta.url);

/** The `ws` package (installed with wrangler's miniflare); Node 20's global WebSocket needs a flag. */
function loadWebSocket() {
  try {
    return { impl: require("ws"), kind: "ws" };
  } catch {
    if (globalThis.WebSocket) return { impl: globalThis.WebSocket, kind: "global" };
    throw new Error("No WebSocket client: run with `node --experimental-websocket bench/run.mjs`, or install ws");
  }
}
const { impl: WS, kind: WS_KIND } = loadWebSocket();

export { WS_KIND };

export const now = () => performance.now();

export class Api {
  constructor(base, key) {
    this.base = base;
    this.key = key;
    this.headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  }

  async req(method, path, body) {
    const res = await fetch(this.base + path, { method, headers: this.headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : null;
  }

  /** A session on an inline agent using the scripted model `model` (see fake-llm.mjs) and the calculator. */
  async createSession(model, maxSteps = 11) {
    const agent = { name: "bench", model: `openai-compatible:${model}`, tools: ["calculator"], max_steps: maxSteps };
    return (await this.req("POST", "/v1/sessions", { agent })).session_id;
  }

  submit(sid, input = "go") {
    return this.req("POST", `/v1/sessions/${sid}/turns`, { input });
  }

  async lastSequence(sid) {
    return (await this.req("GET", `/v1/sessions/${sid}/thread`)).last_sequence;
  }

  /** Every event of the session as {raw, event}, through the JSON pages. */
  async events(sid, after = 0) {
    const out = [];
    for (;;) {
      const res = await fetch(`${this.base}/v1/sessions/${sid}/events?after=${after}&limit=1000`, { headers: this.headers });
      const text = await res.text();
      const page = JSON.parse(text);
      for (const e of page.events) out.push(e);
      if (!page.has_more) return out;
      after = page.next_after;
    }
  }

  /** Reads GET .../export to its end: its lines (the header line, then one per event) and bytes. */
  async exportLog(sid) {
    const res = await fetch(`${this.base}/v1/sessions/${sid}/export`, { headers: this.headers });
    if (res.status !== 200) throw new Error(`GET /v1/sessions/${sid}/export: ${res.status} ${(await res.text()).slice(0, 300)}`);
    let lines = 0;
    let bytes = 0;
    for await (const chunk of res.body) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines += 1;
    }
    return { lines, bytes };
  }

  wsUrl(sid, after, batch = false) {
    return `${this.base.replace(/^http/, "ws")}/v1/sessions/${sid}/ws?after=${after}${batch ? "&frames=batch" : ""}`;
  }

  /** Opens a WebSocket on the session (`opts.batch`: frames=batch, the events committed together in one frame); see Sub. */
  subscribe(sid, after, opts = {}) {
    const url = this.wsUrl(sid, after, opts.batch);
    return new Sub(new WS(url, WS_KIND === "ws" ? { headers: this.headers, perMessageDeflate: opts.deflate ?? true } : undefined), opts);
  }

  /** A WebSocket on any URL (the baseline's micro benchmark). */
  subscribeRaw(url, deflate = true) {
    return new Sub(new WS(url, WS_KIND === "ws" ? { perMessageDeflate: deflate } : undefined));
  }

  /** Time for an SSE client to receive `counts` events (sorted ascending) from cursor `after`: ms at each. */
  async sseReplay(sid, after, counts) {
    const ctrl = new AbortController();
    const t0 = now();
    const res = await fetch(`${this.base}/v1/sessions/${sid}/events?after=${after}`, {
      headers: { ...this.headers, accept: "text/event-stream" },
      signal: ctrl.signal,
    });
    const marks = [];
    let seen = 0;
    let first = null;
    let prevLf = false;
    let next = 0;
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        // An event ends with a blank line; count "\n\n" (which may straddle two chunks).
        let i = 0;
        if (prevLf && value[0] === 10) {
          seen += 1;
          i = 1;
        }
        const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        for (;;) {
          const j = buf.indexOf("\n\n", i);
          if (j < 0) break;
          seen += 1;
          i = j + 2;
        }
        prevLf = value[value.length - 1] === 10;
        if (first === null && seen > 0) first = now() - t0;
        while (next < counts.length && seen >= counts[next]) {
          marks.push(now() - t0);
          next += 1;
        }
        if (next >= counts.length) break;
      }
    } finally {
      ctrl.abort();
    }
    if (marks.length < counts.length) throw new Error(`SSE replay ended after ${seen} events`);
    return { marks, first_ms: first };
  }
}

/**
 * A WebSocket subscriber. It counts frames, keeps them when `keep` is set, and resolves waiters on a
 * frame matching a substring test (no JSON parsing on the hot path) or on a frame count.
 */
export class Sub {
  constructor(ws, { keep = false, batch = false } = {}) {
    this.ws = ws;
    this.keep = keep;
    /** Frames are arrays of events (frames=batch): `count` counts their events, so each is parsed. */
    this.batch = batch;
    this.frames = [];
    this.count = 0;
    this.waiters = [];
    this.countWaiters = [];
    this.opened = new Promise((resolve, reject) => {
      const fail = (e) => reject(e instanceof Error ? e : new Error(`WebSocket error ${e?.message ?? e?.type ?? ""}`));
      if (WS_KIND === "ws") {
        ws.once("open", () => resolve(now()));
        ws.once("error", fail);
        ws.once("unexpected-response", (_req, res) => fail(new Error(`WebSocket upgrade refused: ${res.statusCode}`)));
      } else {
        ws.addEventListener("open", () => resolve(now()), { once: true });
        ws.addEventListener("error", fail, { once: true });
      }
    });
    this.opened.catch(() => {});
    const onMessage = (data) => {
      this.count += this.batch ? JSON.parse(typeof data === "string" ? data : data.toString()).length : 1;
      const t = now();
      if (this.countWaiters.length > 0) {
        while (this.countWaiters.length > 0 && this.count >= this.countWaiters[0].n) this.countWaiters.shift().resolve(t);
      }
      if (!this.keep && this.waiters.length === 0) return;
      const s = typeof data === "string" ? data : data.toString();
      if (this.keep) this.frames.push({ t, s });
      for (let i = 0; i < this.waiters.length; i++) {
        const w = this.waiters[i];
        if (w.test(s)) {
          this.waiters.splice(i--, 1);
          w.resolve({ t, s });
        }
      }
    };
    if (WS_KIND === "ws") ws.on("message", (data) => onMessage(data));
    else ws.addEventListener("message", (e) => onMessage(e.data));
  }

  get extensions() {
    return this.ws.extensions ?? "";
  }

  /** Resolves with {t, s} for the first later frame for which test(s) holds. */
  waitFor(test, timeoutMs = 120_000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for a frame")), timeoutMs);
      this.waiters.push({
        test,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
      });
    });
  }

  /** Resolves with the time at which the n-th frame (the n-th event with `batch`, counted since open) arrived. */
  waitCount(n, timeoutMs = 600_000) {
    if (this.count >= n) return Promise.resolve(now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out at ${this.count} of ${n} frames`)), timeoutMs);
      this.countWaiters.push({
        n,
        resolve: (t) => {
          clearTimeout(timer);
          resolve(t);
        },
      });
      this.countWaiters.sort((a, b) => a.n - b.n);
    });
  }

  close() {
    try {
      this.ws.close();
    } catch {
      // closed
    }
  }
}

/** A frame that ends a turn, whichever turn. */
export const terminalAny = (s) => /"type":"turn\.(completed|failed|cancelled)"/.test(s);
export const isTerminal = (turnId) => (s) => s.includes(turnId) && /"type":"turn\.(completed|failed|cancelled)"/.test(s);
export const isType = (type, turnId) => (s) => s.includes(`"type":"${type}"`) && (!turnId || s.includes(turnId));

// ---- statistics ----

export function quantile(xs, q) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}
export const median = (xs) => quantile(xs, 0.5);
export function summary(xs) {
  return {
    n: xs.length,
    median: median(xs),
    p50: quantile(xs, 0.5),
    p99: quantile(xs, 0.99),
    min: xs.length ? Math.min(...xs) : null,
    max: xs.length ? Math.max(...xs) : null,
  };
}
export const round = (x, d = 2) => (x === null || x === undefined || Number.isNaN(x) ? null : Math.round(x * 10 ** d) / 10 ** d);
