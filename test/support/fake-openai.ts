// A scripted fake of the OpenAI Chat Completions API, run in Node by vitest's globalSetup.
// Tests (inside workerd) PUT a script of steps under an id, then point the model id at that
// script: each POST /v1/chat/completions pops the next step. It also serves a few fake
// webhook-tool endpoints under /v1/_tools/*. No dependencies beyond node:http.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { anthropicMessages, retryAfter } from "./fake-anthropic";
import { fakeEmbedding } from "./fake-embedding";
// Step lives in the workerd-side helper so test code can type-check without Node types;
// this import is type-only and erased at runtime.
import type { Step } from "./fake-model";
import { fakeResponses } from "./fake-responses";
import { handleGate } from "./gates";
import { handleReceiver } from "./receiver";

interface Script {
  steps: Step[];
}

interface WireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

const DEFAULT_USAGE: NonNullable<Step["usage"]> = { prompt_tokens: 10, completion_tokens: 5 };

export async function startFakeOpenAI(port: number): Promise<{ close(): Promise<void> }> {
  const scripts = new Map<string, Script>();
  const requests = new Map<string, unknown[]>();
  const toolRequests: unknown[] = [];
  let toolCallCounter = 0;
  let completionCounter = 0;
  const responses = fakeResponses(readBody);

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // Never let a handler bug (or a write after disconnect) take the server down.
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, { error: { message: String(err), type: "server_error" } });
      } else {
        res.destroy();
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname;
    const method = req.method ?? "GET";

    const scriptMatch = /^\/v1\/_scripts\/([^/]+)$/.exec(path);
    if (scriptMatch && method === "PUT") {
      const id = decodeURIComponent(scriptMatch[1]!);
      const body = await readJson(req);
      if (!isRecord(body) || !Array.isArray(body.steps)) {
        return sendJson(res, 400, { error: { message: "expected {steps: Step[]}", type: "invalid_request_error" } });
      }
      scripts.set(id, { steps: [...(body.steps as Step[])] });
      requests.set(id, []);
      return sendJson(res, 200, { ok: true, id, steps: body.steps.length });
    }

    const requestsMatch = /^\/v1\/_scripts\/([^/]+)\/requests$/.exec(path);
    if (requestsMatch && method === "GET") {
      return sendJson(res, 200, requests.get(decodeURIComponent(requestsMatch[1]!)) ?? []);
    }

    if (await handleReceiver(req, res, path, () => readBody(req))) return;
    if (await handleGate(res, path, () => readBody(req))) return;
    if (await responses.handle(req, res, url)) return;

    if (path === "/v1/chat/completions" && method === "POST") {
      return chatCompletions(req, res);
    }

    if (path === "/v1/embeddings" && method === "POST") {
      const body = parseMaybeJson(await readBody(req)) as { input?: string[]; model?: string };
      // Kept under the model's name, so a test naming its own embedding model can count its calls.
      if (body.model) requests.set(body.model, [...(requests.get(body.model) ?? []), body]);
      const data = (body.input ?? []).map((text, index) => ({ object: "embedding", index, embedding: fakeEmbedding(text) }));
      return sendJson(res, 200, { object: "list", data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } });
    }

    if (path === "/anthropic/v1/messages" && method === "POST") {
      const body = parseMaybeJson(await readBody(req));
      const step = isRecord(body) && typeof body.model === "string" ? nextStep(body.model, body) : undefined;
      if (!step) return sendJson(res, 500, { type: "error", error: { type: "api_error", message: "no script for this model" } });
      const echoed = step.error ? { ...step, error: { ...step.error, message: echoHeaders(step.error.message, req) } } : step;
      return anthropicMessages(res, echoed, String((body as Record<string, unknown>).model));
    }

    // Files a turn's input names by URL: one text file, and a redirect to it (which the runtime must not follow).
    if (path === "/v1/_files/notes.txt" && method === "GET") {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end("fetched by url: the code is 7");
      return;
    }
    if (path === "/v1/_files/moved" && method === "GET") {
      res.writeHead(302, { location: "/v1/_files/notes.txt" });
      res.end();
      return;
    }

    if (path === "/v1/_tools/requests" && method === "GET") {
      return sendJson(res, 200, toolRequests);
    }

    if (path.startsWith("/v1/_tools/") && method === "POST") {
      const raw = await readBody(req);
      const body = parseMaybeJson(raw);
      toolRequests.push(body);
      switch (path) {
        case "/v1/_tools/echo":
          return sendJson(res, 200, { received: body });
        // A tool that returns files: the ones the model passed in its arguments (`{files: [...]}`).
        case "/v1/_tools/files":
          return sendJson(res, 200, { note: "made", files: (body as { args?: { files?: unknown } }).args?.files ?? [] });
        case "/v1/_tools/slow": {
          const ms = Number(url.searchParams.get("ms") ?? "0");
          const completed = await sleep(ms, res);
          if (completed) sendJson(res, 200, { ok: true });
          return;
        }
        case "/v1/_tools/fail":
          res.writeHead(500, { "content-type": "text/plain" });
          res.end("tool exploded");
          return;
      }
    }

    sendJson(res, 404, { error: { message: `no route for ${method} ${path}`, type: "not_found" } });
  }

  /** Records the request of script `id` and pops its next step. */
  function nextStep(id: string, body: unknown): Step | undefined {
    if (!requests.has(id)) requests.set(id, []);
    requests.get(id)!.push(body);
    return scripts.get(id)?.steps.shift();
  }

  async function chatCompletions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return sendJson(res, 400, { error: { message: "invalid JSON body", type: "invalid_request_error" } });
    }
    if (!isRecord(body) || typeof body.model !== "string") {
      return sendJson(res, 400, { error: { message: "missing model", type: "invalid_request_error" } });
    }
    const id = body.model;
    const step = nextStep(id, body);
    if (!step) {
      return sendJson(res, 500, { error: { message: `script ${id} exhausted`, type: "server_error" } });
    }
    if (step.error) {
      const message = echoHeaders(step.error.message, req);
      return sendJson(res, step.error.status, { error: { message, type: "invalid_request_error" } }, retryAfter(step));
    }

    const toolCalls: WireToolCall[] = (step.tool_calls ?? []).map((tc) => ({
      id: tc.id ?? `call_${++toolCallCounter}`,
      type: "function",
      function: {
        name: tc.name,
        arguments: typeof tc.arguments === "string" ? tc.arguments : JSON.stringify(tc.arguments ?? {}),
      },
    }));
    const finishReason = toolCalls.length > 0 ? "tool_calls" : "stop";
    const { cached_tokens, ...usage } = step.usage ?? DEFAULT_USAGE;
    const usageWire = {
      ...usage,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
      ...(cached_tokens ? { prompt_tokens_details: { cached_tokens } } : {}),
    };
    const completionId = `chatcmpl-fake-${++completionCounter}`;
    const created = Math.floor(Date.now() / 1000);
    const text = step.text ?? "";

    if (body.stream !== true) {
      if (step.hang) {
        // Never answer; the request ends when the client gives up.
        await untilClosed(res);
        return;
      }
      return sendJson(res, 200, {
        id: completionId,
        object: "chat.completion",
        created,
        model: id,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: step.text ?? null,
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
            finish_reason: finishReason,
          },
        ],
        usage: usageWire,
      });
    }

    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    const chunkSize = Math.max(1, step.chunk_size ?? 4);
    const delayMs = step.delay_ms ?? 0;

    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });

    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id: completionId,
      object: "chat.completion.chunk",
      created,
      model: id,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });

    // Build the whole event sequence up front; then stream it, honouring delay_ms and disconnects.
    const events: unknown[] = [];
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += chunkSize) pieces.push(text.slice(i, i + chunkSize));
    if (pieces.length === 0) {
      events.push(chunk({ role: "assistant", content: "" }));
    } else {
      for (const [i, piece] of pieces.entries()) events.push(chunk(i === 0 ? { role: "assistant", content: piece } : { content: piece }));
    }
    toolCalls.forEach((tc, index) => {
      events.push(
        chunk({
          tool_calls: [{ index, id: tc.id, type: "function", function: { name: tc.function.name, arguments: "" } }],
        }),
      );
      // Split the arguments into two deltas, as real providers stream them in fragments.
      const args = tc.function.arguments;
      const mid = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, mid), args.slice(mid)]) {
        if (part.length > 0) events.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
      }
    });
    events.push(chunk({}, finishReason));
    if (includeUsage) {
      events.push({ id: completionId, object: "chat.completion.chunk", created, model: id, choices: [], usage: usageWire });
    }

    for (const [i, event] of events.entries()) {
      if (delayMs > 0 && !(await sleep(delayMs, res))) return;
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(event)}\n\n`);
      if ((step.hang && i === 0) || step.stall_after === i + 1) {
        await untilClosed(res);
        return;
      }
    }
    res.end("data: [DONE]\n\n");
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });

  return {
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Hanging streams would otherwise keep close() waiting forever.
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** An error message with each `{header:<name>}` replaced by the request's header, as a provider that echoes credentials does. */
function echoHeaders(message: string, req: IncomingMessage): string {
  return message.replace(/\{header:([\w-]+)\}/g, (_, name: string) => String(req.headers[name.toLowerCase()] ?? ""));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseMaybeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const raw = await readBody(req);
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** Resolves when the response's underlying connection closes (client disconnect or server shutdown). */
function untilClosed(res: ServerResponse): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => res.once("close", () => resolve()));
}

/** Waits `ms`; resolves false early if the client disconnects meanwhile. */
function sleep(ms: number, res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onClose = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off("close", onClose);
      resolve(true);
    }, ms);
    res.once("close", onClose);
  });
}
