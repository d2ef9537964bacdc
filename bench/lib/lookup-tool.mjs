// The scripted server's webhook tool, called as the runtime calls an http_tools entry: one definition for every
// bare side of the end-to-end benchmark (the Node loop, the workerd loop and durable floor, the peer), so each
// side calls the same tool. A side passes its own `ai` helpers: the peer has its own install of the SDK.

/** The `lookup` tool POSTing to `${baseURL}/_tools/lookup`. */
export function lookupTool({ tool, jsonSchema }, baseURL) {
  return tool({
    description: "Looks something up.",
    inputSchema: jsonSchema({ type: "object", properties: { query: { type: "string" } }, required: ["query"] }),
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
