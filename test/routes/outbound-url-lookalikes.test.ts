// Unicode look-alikes of a dot or slash ("．．/", U+FF0E, "／", U+FF0F, and the like) in the path of a URL the
// runtime calls out to: a server that normalizes Unicode would read a traversal, so they are refused (422
// naming the field).
import { describe, expect, it } from "vitest";
import { api, createSession, expectOk, expectRefused } from "../support/api";
import { toolURL } from "../support/fake-model";

describe("Unicode look-alikes of a dot or slash in outbound URLs", () => {
  const base = toolURL("x").replace(/x$/, ""); // under TOOL_URL_ALLOWLIST
  const LOOKALIKES: [string, string][] = [
    ["\uFF0E\uFF0E/secret", "U+FF0E"],
    ["\u2024\u2024/secret", "U+2024"],
    ["\u3002\u3002/secret", "U+3002"],
    ["\uFE52\uFE52/secret", "U+FE52"],
    ["\uFF61\uFF61/secret", "U+FF61"],
    ["%EF%BC%8E%EF%BC%8E/secret", "U+FF0E"],
    ["%25EF%25BC%258E./secret", "U+FF0E"],
    ["a/\u2025/secret", "U+2025"],
    ["..\uFF0Fsecret", "U+FF0F"],
    ["..%EF%BC%8Fsecret", "U+FF0F"],
    ["..\uFF3Csecret", "U+FF3C"],
    ["..\u2215secret", "U+2215"],
  ];

  it("are refused in HTTP tool, MCP server, webhook guardrail and subscription URLs (422 naming the field, nothing stored)", async () => {
    const sid = await createSession({ name: "lookalike-source", model: "demo:fast" });
    for (const [suffix, codepoint] of LOOKALIKES) {
      const url = `${base}${suffix}`;
      const why = `must not hold a Unicode look-alike of a dot or slash in its path (${codepoint})`;
      await expectRefused("PUT", "/v1/agents/lookalike", "http_tools.0.url", { model: "demo:fast", http_tools: [{ name: "t", url }] }, why);
      await expectRefused("PUT", "/v1/agents/lookalike", "mcp_servers.0.url", { model: "demo:fast", mcp_servers: [{ name: "m", url }] }, why);
      await expectRefused(
        "PUT",
        "/v1/agents/lookalike",
        "guardrails.input.0.url",
        { model: "demo:fast", guardrails: { input: [{ type: "webhook", url }] } },
        why,
      );
      await expectRefused("PUT", "/v1/agents/lookalike", "subscriptions.0.url", { model: "demo:fast", subscriptions: [{ url }] }, why);
      await expectRefused("POST", `/v1/sessions/${sid}/subscriptions`, "url", { url }, why);
    }
    expect((await api("GET", "/v1/agents/lookalike")).status).toBe(404);
    expect((await expectOk("GET", `/v1/sessions/${sid}/subscriptions`)).subscriptions).toEqual([]);
    // Other non-ASCII paths, and dots in the query, stay allowed.
    await expectOk("PUT", "/v1/agents/lookalike", { model: "demo:fast", http_tools: [{ name: "t", url: `${base}caf\u00e9?q=a\u3002b` }] });
  });
});
