// The bare loop of the end-to-end benchmark: the AI SDK's generateText in this Node process, against the
// same scripted server, with a `lookup` tool that POSTs to the same webhook as the runtime's http_tools
// entry. Nothing durable, nothing streamed to anyone: the floor an agent loop could reach.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { now } from "./client.mjs";
import { lookupTool } from "./lookup-tool.mjs";

export function bareLoop(baseURL) {
  const provider = createOpenAICompatible({ name: "openai-compatible", baseURL, includeUsage: true });
  const lookup = lookupTool({ tool, jsonSchema }, baseURL);
  return async (model, maxSteps) => {
    const t0 = now();
    const result = await generateText({
      model: provider.chatModel(model),
      messages: [{ role: "user", content: "go" }],
      tools: { lookup },
      stopWhen: stepCountIs(maxSteps),
    });
    return { ms: now() - t0, steps: result.steps.length, tool_calls: result.steps.reduce((n, s) => n + s.toolCalls.length, 0) };
  };
}
