// createRuntime's tools as the engine takes them (src/engine/tools/in-process.ts): what a bare AI SDK tool
// defaults to, and the names and options refused when the Worker starts.
import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { inProcessTools } from "../../src/engine/tools/in-process";

const lookup = tool({ description: "Looks a word up", inputSchema: z.object({ word: z.string() }), execute: async ({ word }) => word });

describe("in-process tools", () => {
  it("take a bare tool with the defaults, and the options beside one", () => {
    const tools = inProcessTools({ lookup, pinned: { tool: lookup, permission_class: "safe", idempotent: true, parallel_safe: false, lock: "glossary" } });
    expect(tools.get("lookup")).toMatchObject({
      name: "lookup",
      description: "Looks a word up",
      parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
      permission_class: "network",
      parallel_safe: true,
      idempotent: false,
    });
    expect(tools.get("lookup")!.parameters).not.toHaveProperty("$schema");
    expect(tools.get("pinned")).toMatchObject({ permission_class: "safe", parallel_safe: false, idempotent: true, lock: "glossary" });
  });

  it("refuse, at the Worker's start, a name or an option they cannot take", () => {
    expect(() => inProcessTools({ clock: lookup })).toThrow('createRuntime: tool "clock" clashes with a built-in tool');
    expect(() => inProcessTools({ transfer_to_x: lookup })).toThrow("clashes with a built-in tool");
    expect(() => inProcessTools({ "look up": lookup })).toThrow("must be named with 1-64 characters");
    expect(() => inProcessTools({ lookup: { tool: lookup, timeout_ms: 0 } })).toThrow("needs a timeout_ms between 1 and 900000");
    expect(() => inProcessTools({ lookup: { tool: lookup, lock: "a lock" } })).toThrow("needs a lock");
    expect(() => inProcessTools({ lookup: { tool: lookup, permission_class: "root" as never } })).toThrow('unknown permission_class "root"');
    expect(() => inProcessTools({ lookup: tool({ inputSchema: z.object({}) }) })).toThrow("has no execute function");
  });
});
