// Webhook tools (`HttpTool`, docs/guides/tools-and-permissions.md): POST the call as JSON to the configured URL, answer with the body.
import type { HttpToolSpec } from "../../protocol/agent-config";
import { urlAllowed } from "../url-allowlist";
import { callTimeout, readCapped } from "./http-io";
import { type ToolDefinition, ToolError } from "./types";

/** At most this much of a response is read; the loop then caps what it keeps at max_tool_result_bytes. */
const MAX_RESPONSE_BYTES = 1_000_000;

export function httpTool(spec: HttpToolSpec): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    permission_class: spec.permission_class,
    parallel_safe: spec.parallel_safe,
    idempotent: false,
    ...(spec.lock ? { lock: spec.lock } : {}),
    async execute(args, ctx) {
      // The allowlist may have changed since the agent was saved.
      if (!urlAllowed(spec.url, ctx.urlAllowlist)) throw new ToolError(`URL of tool "${spec.name}" is not allowlisted`);
      const timeout = callTimeout(spec.timeout_ms, ctx.signal);
      let res: Response;
      try {
        res = await ctx.fetch(spec.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            tool: spec.name,
            args,
            session_id: ctx.session_id,
            turn_id: ctx.turn_id,
            tool_call_id: ctx.tool_call_id,
          }),
          signal: timeout.signal,
          redirect: "manual", // a redirect could leave the allowlist
        });
      } catch (err) {
        if (timeout.timedOut()) throw new ToolError(`Tool "${spec.name}" timed out after ${spec.timeout_ms} ms`);
        throw err;
      } finally {
        timeout.clear();
      }
      if (res.status >= 300 && res.status < 400) throw new ToolError(`HTTP ${res.status}: redirects are not followed`);
      const text = await readCapped(res, MAX_RESPONSE_BYTES);
      if (!res.ok) throw new ToolError(`HTTP ${res.status}: ${text}`);
      if ((res.headers.get("content-type") ?? "").includes("application/json")) {
        try {
          return JSON.parse(text);
        } catch {
          return text;
        }
      }
      return text;
    },
  };
}
