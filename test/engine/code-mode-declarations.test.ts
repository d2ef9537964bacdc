// The TypeScript declarations run_code's description gives the model (docs/guides/code-mode.md), from JSON Schemas.
import { describe, expect, it } from "vitest";
import { declarations, tsType, withRunCode } from "../../src/engine/tools/code-mode";
import type { ToolDefinition } from "../../src/engine/tools/types";

const tool = (name: string, parameters: Record<string, unknown>, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name,
  description: `The ${name} tool`,
  parameters,
  permission_class: "network",
  parallel_safe: true,
  idempotent: false,
  execute: async () => null,
  ...extra,
});

describe("code-mode declarations", () => {
  it("turn JSON Schemas into TypeScript types", () => {
    expect(tsType({ type: "object", properties: { q: { type: "string" }, n: { type: "integer" } }, required: ["q"] })).toBe("{ q: string; n?: number }");
    expect(tsType({ enum: ["a", 1] })).toBe('"a" | 1');
    expect(tsType({ type: "array", items: { anyOf: [{ type: "string" }, { type: "null" }] } })).toBe("(string | null)[]");
    expect(tsType({ type: ["string", "boolean"] })).toBe("string | boolean");
    expect(tsType({ type: "object" })).toBe("Record<string, unknown>");
    expect(tsType({ type: "object", properties: { "not-an-id": { const: true } } })).toBe('{ "not-an-id"?: true }');
    expect(tsType({ not: {} })).toBe("unknown");
  });

  it("declare the agent's tools, quoting names that are not identifiers, and leave out what the loop runs", () => {
    const tools = new Map([
      ["lookup", tool("lookup", { type: "object", properties: { q: { type: "string" } }, required: ["q"] })],
      ["mcp-search", tool("mcp-search", { type: "object" })],
      ["ask_user", tool("ask_user", { type: "object", properties: { question: { type: "string" } }, required: ["question"] }, { loop_handled: "ask_user" })],
      ["run_subtask", tool("run_subtask", { type: "object" }, { loop_handled: "run_subtask" })],
      ["transfer_to_x", tool("transfer_to_x", { type: "object" }, { handoff_target: "x" })],
    ]);
    const run = withRunCode(tools).get("run_code")!;
    expect(run).toMatchObject({ loop_handled: "run_code", permission_class: "safe", idempotent: true, parameters: { required: ["code"] } });
    expect(run.description).toContain(declarations([tools.get("lookup")!, tools.get("mcp-search")!, tools.get("ask_user")!]));
    expect(run.description).toContain('  "mcp-search"(args: Record<string, unknown>): Promise<unknown>;');
    expect(run.description).toContain("  lookup(args: { q: string }): Promise<unknown>;");
    expect(run.description).not.toMatch(/run_subtask|transfer_to_x/);
  });
});
