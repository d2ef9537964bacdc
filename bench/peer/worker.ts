// The peer of the end-to-end benchmark: an `AIChatAgent` (@cloudflare/ai-chat on agents) written as its
// README shows, streamText over the persisted messages with the same `lookup` tool as the runtime's
// http_tools entry and the bare loops (a POST to the scripted server's webhook), with the SDK's default
// persistence and its WebSocket chat protocol. The client picks the scripted model and the step limit
// through the request body (useAgentChat's `body` option), as the runtime takes them from the agent.
//
//   GET /healthz                        -> 200 (readiness for the bench)
//   WS  /agents/peer-chat/<name>        -> the chat agent `name` (routeAgentRequest)

import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { AIChatAgent, type OnChatMessageOptions } from "@cloudflare/ai-chat";
import { routeAgentRequest } from "agents";
import { convertToModelMessages, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { lookupTool } from "../lib/lookup-tool.mjs";

interface Env {
  OPENAI_COMPATIBLE_BASE_URL: string;
  PeerChat: DurableObjectNamespace<PeerChat>;
}

export class PeerChat extends AIChatAgent<Env> {
  async onChatMessage(_onFinish: unknown, options?: OnChatMessageOptions) {
    const baseURL = this.env.OPENAI_COMPATIBLE_BASE_URL;
    const { model, maxSteps } = (options?.body ?? {}) as { model: string; maxSteps: number };
    const provider = createOpenAICompatible({ name: "openai-compatible", baseURL, includeUsage: true });
    const lookup = lookupTool({ tool, jsonSchema }, baseURL);
    const result = streamText({
      model: provider.chatModel(model),
      messages: await convertToModelMessages(this.messages),
      tools: { lookup },
      stopWhen: stepCountIs(maxSteps),
      abortSignal: options?.abortSignal,
    });
    return result.toUIMessageStreamResponse();
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    if (new URL(request.url).pathname === "/healthz") return new Response("ok");
    return (await routeAgentRequest(request, env)) ?? new Response("not found", { status: 404 });
  },
};
