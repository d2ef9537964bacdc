// The few plain HTTP calls the page makes besides useChat's own: agents, sessions, the conversation after
// a reload, and interrupt (useChat's stop() only disconnects from a resumable stream).
import type { UIMessage } from "ai";

/** Empty: the Vite dev server forwards /v1 to the runtime. Set VITE_RUNTIME_URL for a built page elsewhere. */
export const BASE: string = import.meta.env.VITE_RUNTIME_URL ?? "";

async function call<T>(key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(json?.error?.message ?? `${method} ${path} failed (${res.status})`);
  return json as T;
}

export const listAgents = (key: string) => call<{ agents: { name: string; model: string }[] }>(key, "GET", "/v1/agents");

/** The demo agent's name: not the Quickstart's `demo`, whose calculator asks for no approval. */
export const DEMO_AGENT = "demo-chat";

/** A demo agent on the offline model: it calls calculator (which needs an approval) and clock. */
export const createDemoAgent = (key: string) =>
  call(key, "PUT", `/v1/agents/${DEMO_AGENT}`, { model: "demo:slow", tools: ["calculator", "clock"], hitl_tools: ["calculator"] });

export const openSession = (key: string, agent: string) => call<{ session_id: string }>(key, "POST", "/v1/sessions", { agent });

export const loadMessages = (key: string, sid: string) => call<UIMessage[]>(key, "GET", `/v1/sessions/${sid}/messages`);

export const interrupt = (key: string, sid: string) => call(key, "POST", `/v1/sessions/${sid}/interrupt`, { reason: "stopped in the page" });

/**
 * Where the page loads a file part from: a data URL (not sent yet) as it is; the runtime's file route (what GET
 * .../messages gives) on the runtime, with the key as `?access_token=`, as an <img> sends no header.
 */
export const fileSrc = (key: string, url: string) => (url.startsWith("/v1/") ? `${BASE}${url}?access_token=${encodeURIComponent(key)}` : url);
