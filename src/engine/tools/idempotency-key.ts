// The Idempotency-Key of a webhook tool call (docs/guides/tools-and-permissions.md, "Retries and idempotency"):
// derived from facts the log keeps, so every attempt of one call carries the same key (its retries, its resend
// after a restart, a call that outlives an interrupt), and any other call, a replay's too, another.
import type { ToolContext } from "./types";

export async function idempotencyKey(ctx: Pick<ToolContext, "session_id" | "turn_id" | "tool_call_id" | "subagent_id" | "replay">): Promise<string> {
  // A sub-agent's calls share their turn's id, and their ids come from the model: the sub-agent tells them apart.
  const facts = ["v1", ctx.session_id, ctx.turn_id, ctx.subagent_id ?? "", ctx.tool_call_id, ctx.replay ? "replay" : ""].join("\n");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(facts)));
  return `idk_${Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
