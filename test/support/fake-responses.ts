// The OpenAI Responses API's streamed calls in background mode, as far as re-attaching needs them: POST
// /v1/responses starts a response that runs on whether or not its caller stays (its text streamed slowly, then
// response.completed with usage), and GET /v1/responses/:id?stream=true[&starting_after=N] replays its events
// after N and follows it live while it runs. A test plans a model's answer (PUT /v1/_responses/:model) and reads
// what was asked (GET /v1/_responses/:model/stats): the POSTs are the billed requests.
import type { IncomingMessage, ServerResponse } from "node:http";

export interface ResponsePlan {
  text: string;
  chunk_size?: number;
  delay_ms?: number;
  usage?: { input_tokens: number; output_tokens: number };
  /** false: its responses cannot be read again (GET answers 404, as for an expired one). */
  retrievable?: boolean;
}

interface Running {
  plan: ResponsePlan;
  events: string[];
  done: boolean;
  model: string;
  listeners: Set<() => void>;
}

interface Stats {
  posts: unknown[];
  gets: { response_id: string; status: number; starting_after: number }[];
  cancels: string[];
}

/** A fake Responses API; `handle` answers its paths and says whether it did. */
export function fakeResponses(readBody: (req: IncomingMessage) => Promise<string>) {
  const plans = new Map<string, ResponsePlan>();
  const stats = new Map<string, Stats>();
  const running = new Map<string, Running>();
  let counter = 0;
  const statsOf = (model: string): Stats => {
    let s = stats.get(model);
    if (!s) stats.set(model, (s = { posts: [], gets: [], cancels: [] }));
    return s;
  };

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const method = req.method ?? "GET";
    const planned = /^\/v1\/_responses\/([^/]+)(\/stats)?$/.exec(url.pathname);
    if (planned && method === "PUT") {
      plans.set(decodeURIComponent(planned[1]!), JSON.parse(await readBody(req)) as ResponsePlan);
      return json(res, 200, { ok: true });
    }
    if (planned?.[2] && method === "GET") return json(res, 200, statsOf(decodeURIComponent(planned[1]!)));
    if (url.pathname === "/v1/responses" && method === "POST") {
      const body = JSON.parse(await readBody(req)) as { model: string; stream?: boolean; background?: boolean };
      // With the request's x- headers: the runtime's own call header must not reach the provider.
      statsOf(body.model).posts.push({ ...body, x_headers: Object.keys(req.headers).filter((h) => h.startsWith("x-")) });
      if (!body.stream) return json(res, 400, { error: { message: "only streamed calls here", type: "invalid_request_error" } });
      const id = `resp_${++counter}`;
      const run: Running = { plan: plans.get(body.model) ?? { text: "ok" }, events: [], done: false, model: body.model, listeners: new Set() };
      running.set(id, run);
      void produce(id, body.model, run);
      follow(res, run, -1);
      return true;
    }
    const retrieve = /^\/v1\/responses\/([^/]+)$/.exec(url.pathname);
    if (retrieve && method === "GET") {
      const id = decodeURIComponent(retrieve[1]!);
      const run = running.get(id);
      const starting_after = Number(url.searchParams.get("starting_after") ?? "-1");
      const status = run && run.plan.retrievable !== false ? 200 : 404;
      statsOf(run?.model ?? "unknown").gets.push({ response_id: id, status, starting_after });
      if (status === 404) return json(res, 404, { error: { message: `Response with id '${id}' not found.`, type: "invalid_request_error" } });
      follow(res, run!, starting_after);
      return true;
    }
    const cancel = /^\/v1\/responses\/([^/]+)\/cancel$/.exec(url.pathname);
    if (cancel && method === "POST") {
      const id = decodeURIComponent(cancel[1]!);
      const run = running.get(id);
      if (!run) return json(res, 404, { error: { message: `Response with id '${id}' not found.`, type: "invalid_request_error" } });
      statsOf(run.model).cancels.push(id);
      run.done = true; // it writes no more; listeners end with what they have
      for (const listener of run.listeners) listener();
      return json(res, 200, { id, object: "response", status: "cancelled" });
    }
    return false;
  }

  /** The response's events, produced on their own schedule whoever listens. */
  async function produce(id: string, model: string, run: Running): Promise<void> {
    const { text, chunk_size = text.length || 1, delay_ms = 0, usage = { input_tokens: 10, output_tokens: 5 } } = run.plan;
    const emit = (event: Record<string, unknown>) => {
      const sequence_number = run.events.length;
      run.events.push(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number })}\n\n`);
      for (const listener of run.listeners) listener();
    };
    const response = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model, status: "in_progress", background: true };
    const item_id = `msg_${id}`;
    emit({ type: "response.created", response });
    emit({
      type: "response.output_item.added",
      output_index: 0,
      item: { type: "message", id: item_id, role: "assistant", status: "in_progress", content: [] },
    });
    for (let at = 0; at < text.length; at += chunk_size) {
      if (delay_ms > 0) await new Promise((r) => setTimeout(r, delay_ms));
      if (run.done) return; // cancelled
      emit({ type: "response.output_text.delta", item_id, output_index: 0, content_index: 0, delta: text.slice(at, at + chunk_size) });
    }
    const total_tokens = usage.input_tokens + usage.output_tokens;
    run.done = true;
    emit({ type: "response.completed", response: { ...response, status: "completed", usage: { ...usage, total_tokens } } });
  }

  return { handle };
}

/** Streams the run's events after sequence `after` to `res`, then its live ones until it is done. */
function follow(res: ServerResponse, run: Running, after: number): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let sent = after + 1;
  const flush = () => {
    if (res.destroyed) return run.listeners.delete(flush);
    while (sent < run.events.length) res.write(run.events[sent++]);
    if (run.done && sent >= run.events.length) {
      run.listeners.delete(flush);
      res.end();
    }
  };
  run.listeners.add(flush);
  res.once("close", () => run.listeners.delete(flush));
  flush();
}

function json(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
  return true;
}
