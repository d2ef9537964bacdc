// http_fetch: GET a URL under TOOL_URL_ALLOWLIST, with a timeout and a response size cap.
import { urlAllowed } from "../url-allowlist";
import { callTimeout, readCapped } from "./http-io";
import { type ToolDefinition, ToolError } from "./types";

const TIMEOUT_MS = 10_000;
const MAX_BYTES = 100_000;

export const httpFetch: ToolDefinition = {
  name: "http_fetch",
  description: `Fetches a URL with GET (only URLs this deployment allows) and returns its status, content type and up to ${MAX_BYTES} bytes of body.`,
  parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"], additionalProperties: false },
  permission_class: "network",
  parallel_safe: true,
  idempotent: true,
  async execute(args, ctx) {
    const url = String(args.url);
    if (!urlAllowed(url, ctx.urlAllowlist)) throw new ToolError(`URL is not allowed: ${url}`);
    const timeout = callTimeout(TIMEOUT_MS, ctx.signal);
    let res: Response;
    try {
      res = await ctx.fetch(url, { method: "GET", redirect: "manual", signal: timeout.signal });
    } catch (err) {
      if (timeout.timedOut()) throw new ToolError(`Timed out after ${TIMEOUT_MS} ms`);
      throw err;
    } finally {
      timeout.clear();
    }
    if (res.status >= 300 && res.status < 400) throw new ToolError(`HTTP ${res.status}: redirects are not followed`);
    const body = await readCapped(res, MAX_BYTES);
    return { status: res.status, content_type: res.headers.get("content-type"), body };
  },
};
