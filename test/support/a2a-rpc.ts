// JSON-RPC over fetch as an A2A client sends it, for the A2A tests (test/routes/a2a*.test.ts).
import { api } from "./api";

type Rpc = { status: number; body: any; headers: Headers };

let next = 0;
/** The id of the last JSON-RPC request sent. */
export const lastId = () => next;
export const rpc = (agent: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<Rpc> =>
  api("POST", `/a2a/${agent}`, { jsonrpc: "2.0", id: ++next, method, params }, { "a2a-version": "1.0", ...headers });

export const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: `m-${++next}`,
  role: "ROLE_USER",
  parts: [{ text }],
  ...extra,
});

/** The SSE events of a JSON-RPC stream: each `id:` and the result it carries. */
export function sse(text: string | null): { id: number; result: any; rpcId: unknown }[] {
  return (text ?? "")
    .split("\n\n")
    .filter((b) => b.startsWith("id: "))
    .map((b) => {
      const [head, data] = b.split("\n");
      const body = JSON.parse(data!.slice(6));
      return { id: Number(head!.slice(4)), result: body.result, rpcId: body.id };
    });
}

export const state = (e: { result: any }) => e.result.task?.status.state ?? e.result.statusUpdate?.status.state;
