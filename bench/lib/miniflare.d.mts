import type { Miniflare, MiniflareOptions } from "miniflare";

/** Bundles the worker as for deploy into a fresh directory; returns it (miniflare.mjs). */
export declare function bundleWorker(): string;
/** Miniflare options running `bundle` on the state directory `state`, the rest from wrangler.toml. */
export declare function runtimeOptions(bundle: string, state: string, bindings: Record<string, string>): MiniflareOptions;
export declare const BENCH_KEY: string;
export declare function startBundledRuntime(bindings?: Record<string, string>): Promise<{
  mf: Miniflare;
  fetch: (path: string, init?: RequestInit) => Promise<Response>;
  call: (method: string, path: string, body?: unknown) => Promise<any>;
  dispose: () => Promise<void>;
}>;
