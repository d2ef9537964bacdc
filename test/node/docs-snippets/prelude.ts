// What the docs' TypeScript fragments take as given: the deployment's address and key, a React app's
// `useChat` (from `@ai-sdk/react`, a dependency of the example, not of this package) and an MCP client's
// imports. Declared globally for the snippets only (test/node/docs-snippets.test.ts, for docs/*.md), never for other code.
import type { AbstractChat, ChatInit, UIMessage } from "ai";

declare global {
  /** The runtime's URL and an API key, as the README's fragments call them. */
  const base: string;
  const B: string;
  const KEY: string;
  const headers: Record<string, string>;
  const sessionId: string;
  function useChat(options: ChatInit<UIMessage> & { resume?: boolean }): Pick<AbstractChat<UIMessage>, "messages" | "sendMessage" | "addToolApprovalResponse">;
  const DefaultChatTransport: typeof import("ai").DefaultChatTransport;
  const lastAssistantMessageIsCompleteWithApprovalResponses: typeof import("ai").lastAssistantMessageIsCompleteWithApprovalResponses;
  const Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
  const StreamableHTTPClientTransport: typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js").StreamableHTTPClientTransport;
}
