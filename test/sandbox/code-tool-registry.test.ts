// Code tools registered over HTTP (docs/guides/code-tools.md): versions, write-only secrets, and sources that
// do not load refused with the parser's line and column.
import { describe, expect, it } from "vitest";
import { api, apiAs, expectOk, expectRefused } from "../support/api";

const SOURCE = "export default async ({ text }) => ({ words: text.split(/\\s+/).filter(Boolean).length });\n";
const tool = (extra: Record<string, unknown> = {}) => ({
  description: "Counts words",
  input_schema: { type: "object", properties: { text: { type: "string" } } },
  source: SOURCE,
  ...extra,
});

describe("PUT /v1/code-tools/:name", () => {
  it("stores version 1, keeps it for an unchanged PUT, adds a version for each change, and reads secrets by name only", async () => {
    const created = await api("PUT", "/v1/code-tools/word_count", tool({ secrets: { API_TOKEN: "s3cret-value" } }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "word_count", version: 1, timeout_ms: 10000, cpu_ms: 1000, allowed_hosts: [], secrets: ["API_TOKEN"] });
    expect(created.body.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(created.body)).not.toContain("s3cret-value");

    const same = await api("PUT", "/v1/code-tools/word_count", tool());
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ version: 1, hash: created.body.hash, secrets: ["API_TOKEN"] });

    const changed = await expectOk("PUT", "/v1/code-tools/word_count", tool({ source: `${SOURCE}// v2\n` }));
    expect(changed).toMatchObject({ version: 2, secrets: ["API_TOKEN"] });
    expect(changed.source_hash).not.toBe(created.body.source_hash);
    // A new secret value is a new version too; its hash (names only) shows nothing of the value.
    const rotated = await expectOk("PUT", "/v1/code-tools/word_count", tool({ source: `${SOURCE}// v2\n`, secrets: { API_TOKEN: "rotated" } }));
    expect(rotated).toMatchObject({ version: 3, hash: changed.hash });

    expect(await expectOk("GET", "/v1/code-tools/word_count")).toMatchObject({ version: 3, source: `${SOURCE}// v2\n` });
    expect(await expectOk("GET", "/v1/code-tools/word_count?version=1")).toMatchObject({ version: 1, source: SOURCE });
    const list = await expectOk("GET", "/v1/code-tools");
    expect(list.code_tools.find((t: any) => t.name === "word_count")).toMatchObject({ version: 3 });
    expect(JSON.stringify(list)).not.toMatch(/s3cret-value|rotated/);

    expect(await expectOk("DELETE", "/v1/code-tools/word_count")).toEqual({ deleted: true, name: "word_count" });
    expect((await api("GET", "/v1/code-tools/word_count")).status).toBe(404);
    expect((await api("DELETE", "/v1/code-tools/word_count")).status).toBe(404);
  });

  it("refuses a source that does not parse, naming the line and column, and stores nothing", async () => {
    await expectRefused(
      "PUT",
      "/v1/code-tools/broken",
      "source",
      tool({ source: "export default async (args) => {\n  let x = ;\n};\n" }),
      /SyntaxError: .* at line 2, column \d+/,
    );
    expect((await api("GET", "/v1/code-tools/broken")).status).toBe(404);
  });

  it("refuses a source without a default function, one that throws while loading, or one importing a module", async () => {
    await expectRefused(
      "PUT",
      "/v1/code-tools/nodefault",
      "source",
      tool({ source: "export const run = async () => 1;\n" }),
      "the source's default export is missing",
    );
    await expectRefused("PUT", "/v1/code-tools/notfn", "source", tool({ source: "export default 42;\n" }), "the source's default export is not a function");
    await expectRefused("PUT", "/v1/code-tools/throws", "source", tool({ source: "\nthrow new Error('no');\nexport default async () => 1;\n" }), /Error: no/);
    await expectRefused("PUT", "/v1/code-tools/imports", "source", tool({ source: 'import x from "lodash";\nexport default async () => x;\n' }), /lodash/);
  });

  it("refuses bad fields, a built-in's name, and callers who may not write agents", async () => {
    await expectRefused("PUT", "/v1/code-tools/calculator", "name", tool(), '"calculator" clashes with a built-in tool');
    await expectRefused("PUT", "/v1/code-tools/hosts", "allowed_hosts.0", tool({ allowed_hosts: ["https://api.example.com/x"] }));
    await expectRefused("PUT", "/v1/code-tools/secretname", "secrets.lower", tool({ secrets: { lower: "x" } }));
    await expectRefused("PUT", "/v1/code-tools/schema", "input_schema", tool({ input_schema: { type: "string" } }));
    await expectRefused("PUT", "/v1/code-tools/cpu", "cpu_ms", tool({ cpu_ms: 0 }));
    expect((await apiAs("PUT", "/v1/code-tools/ops", "operator-key", tool())).status).toBe(403);
    expect((await apiAs("GET", "/v1/code-tools", "read-key")).status).toBe(200);
  });

  it("lets an agent list a registered code tool in tools, and refuses one that is not registered", async () => {
    await expectOk("PUT", "/v1/code-tools/counter", tool());
    expect((await api("PUT", "/v1/agents/with-code", { model: "openai-compatible:m", tools: ["counter", "calculator"], hitl_tools: ["counter"] })).status).toBe(
      201,
    );
    await expectRefused("PUT", "/v1/agents/without", "tools.0", { model: "openai-compatible:m", tools: ["not_registered"] }, 'unknown tool "not_registered"');
  });
});
