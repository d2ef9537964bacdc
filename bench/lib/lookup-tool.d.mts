import type { jsonSchema, Tool, tool } from "ai";

/** The `lookup` tool POSTing to `${baseURL}/_tools/lookup` (lookup-tool.mjs). */
export declare function lookupTool(ai: { tool: typeof tool; jsonSchema: typeof jsonSchema }, baseURL: string): Tool<{ query: string }, unknown>;
