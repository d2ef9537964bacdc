// MCP tools' names and permission classes (src/engine/tools/mcp-names.ts): pure, so in Node; the tools of a
// real MCP server end to end: test/session/runner/mcp.test.ts.
import { describe, expect, it } from "vitest";
import { mcpPermissionClass, mcpToolName, parseMcpRef } from "../../src/engine/tools/mcp-names";

describe("MCP naming and classes", () => {
  it("makes provider-safe names that stay apart, and classes tools from their server and annotations", () => {
    expect(mcpToolName("files", "notes.search")).toBe("files__notes_search");
    expect(mcpToolName("files", "a/b c")).toBe("files__a_b_c");
    const long = (end: string) => mcpToolName("a_server_with_a_long_name", `${"x".repeat(60)}${end}`);
    expect(long("1")).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(long("1")).not.toBe(long("2"));
    expect(parseMcpRef("mcp:files/*")).toEqual({ server: "files", tool: "*" });
    expect(parseMcpRef("mcp:files/notes.search")).toEqual({ server: "files", tool: "notes.search" });
    expect(parseMcpRef("mcp:files")).toBeNull();
    const untrusted = { permission_class: "knowledge" as const, trusted: false };
    expect(mcpPermissionClass(untrusted, undefined)).toBe("knowledge");
    expect(mcpPermissionClass(untrusted, { readOnlyHint: true })).toBe("knowledge");
    expect(mcpPermissionClass({ ...untrusted, trusted: true }, { readOnlyHint: true })).toBe("safe");
    expect(mcpPermissionClass({ ...untrusted, trusted: true }, { readOnlyHint: true, destructiveHint: true })).toBe("external_mutate");
    expect(mcpPermissionClass(untrusted, { destructiveHint: false })).toBe("knowledge");
  });
});
