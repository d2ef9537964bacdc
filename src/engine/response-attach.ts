// Re-attaching to a model call a restart cut, instead of paying for it twice (docs/guides/subagents-and-budgets.md,
// "Calls lost to a restart"), for the OpenAI Responses API: each streamed call is made in background mode, so the
// response outlives the connection and the object that made it, and can be read again by id. The first event of
// the stream (response.created) names it, and the turn records that id before any text passes on. A call the
// recovery makes again with a recorded id does not POST: it reads the same response's stream (GET
// /responses/{id}?stream=true) and hands it to the provider model as if it were the answer to the POST.
import type { LanguageModelV3 } from "@ai-sdk/provider";

/** The request header that ties a provider request to its call's hooks; removed before the request leaves. */
export const CALL_HEADER = "x-agent-runtime-call";

export interface AttachHooks {
  /** The response of a cut call to read again instead of sending the call; undefined: send it. */
  response_id?: string;
  /** The provider named the call's response (synchronously, before the stream's events reach the model). */
  attached(response_id: string): void;
  /** The cut call's response could not be read again (`status`: 404 when it expired or is unknown): it is sent again. */
  missed(status: number): void;
}

/** The models whose provider fetch re-attaches (made by models.ts); other models get no call header. */
export const attachableModels = new WeakSet<LanguageModelV3>();

const hooked = new Map<string, AttachHooks>();

/** Hooks for the provider requests carrying `token` in CALL_HEADER, until the returned release is called. */
export function hookCall(token: string, hooks: AttachHooks): () => void {
  hooked.set(token, hooks);
  return () => hooked.delete(token);
}

/** A provider `fetch` that makes streamed Responses calls in background mode and re-attaches to them. */
export function attachingFetch(): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const token = headers.get(CALL_HEADER);
    headers.delete(CALL_HEADER);
    const hooks = token ? hooked.get(token) : undefined;
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const body = hooks && init?.method === "POST" && url.endsWith("/responses") && typeof init.body === "string" ? JSON.parse(init.body) : null;
    if (!hooks || body?.stream !== true) return fetch(input, { ...init, headers });
    const cut = hooks.response_id;
    const cancel = (id: string) => {
      // The call was abandoned (an interrupted turn, a timeout): its background response would run on, billed.
      fetch(`${url}/${encodeURIComponent(id)}/cancel`, { method: "POST", headers })
        .then((r) => r.body?.cancel())
        .catch(() => {});
    };
    if (cut) {
      hooks.response_id = undefined;
      // No starting_after: the whole stream from its first event, which the provider model parses as it would the POST's.
      const res = await fetch(`${url}/${encodeURIComponent(cut)}?stream=true`, { method: "GET", headers, signal: init?.signal });
      if (res.ok && res.body) return following(res, init?.signal, cancel, cut);
      await res.body?.cancel();
      hooks.missed(res.status);
    }
    const res = await fetch(input, { ...init, headers, body: JSON.stringify({ ...body, background: true }) });
    if (!res.ok || !res.body) return res;
    return following(res, init?.signal, cancel, undefined, hooks.attached);
  };
}

/**
 * The response `res` streams, passed on unchanged: `named` hears its id from its response.created event before
 * the event passes, and the response is cancelled if `signal` aborts before its stream ended.
 */
function following(
  res: Response,
  signal: AbortSignal | null | undefined,
  cancel: (id: string) => void,
  known?: string,
  named?: (response_id: string) => void,
): Response {
  let id = known;
  let ended = false;
  const onAbort = () => {
    if (id && !ended) cancel(id);
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  const watch = watchCreated(
    (response_id) => {
      id = response_id;
      named?.(response_id);
    },
    () => {
      ended = true;
      signal?.removeEventListener("abort", onAbort);
    },
  );
  return new Response(res.body!.pipeThrough(watch), { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Passes an SSE stream through unchanged, calling `named` with the response id of its response.created event first, `ended` at its end. */
function watchCreated(named: (response_id: string) => void, ended: () => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let seen = "";
  let done = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (!done) {
        seen += decoder.decode(chunk, { stream: true });
        for (const line of seen.split("\n").slice(0, -1)) {
          if (!line.startsWith("data:")) continue;
          const event = parse(line.slice(5));
          if (event?.type !== "response.created") continue;
          done = true;
          if (typeof event.response?.id === "string") named(event.response.id);
          break;
        }
        // A stream whose first events name no response is not watched past a few of them.
        if (done || seen.length > 65_536) {
          done = true;
          seen = "";
        }
      }
      controller.enqueue(chunk);
    },
    flush: ended,
  });
}

function parse(text: string): { type?: string; response?: { id?: unknown } } | null {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
