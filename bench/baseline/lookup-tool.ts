// The fake server's webhook tool, called as the runtime calls an http_tools entry: the tool of the bare loops
// of the end-to-end benchmark (worker.ts) and of its durable floor (durable-loop.ts).
import { jsonSchema, tool } from "ai";

export function lookup(baseURL: string) {
  return tool({
    description: "Looks something up.",
    inputSchema: jsonSchema<{ query: string }>({ type: "object", properties: { query: { type: "string" } }, required: ["query"] }),
    execute: async (args) => {
      const res = await fetch(`${baseURL}/_tools/lookup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "lookup", args }),
      });
      return res.json();
    },
  });
}
