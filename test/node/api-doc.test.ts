// docs/reference/api.md is generated from the operation declarations: this fails when the committed file is
// stale (regenerate it with `npm run docs:api`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { apiMarkdown } from "../../src/protocol/api-doc";
import { OPERATIONS } from "../../src/protocol/operations";

describe("docs/reference/api.md", () => {
  it("is what the operation declarations generate, with a section for every operation", () => {
    const committed = readFileSync(join(import.meta.dirname, "..", "..", "docs", "reference", "api.md"), "utf8");
    expect(committed, "docs/reference/api.md is stale: run npm run docs:api").toBe(apiMarkdown());
    for (const op of OPERATIONS) expect(committed).toContain(`### \`${op.method.toUpperCase()} ${op.path}\` (${op.operationId})`);
  });
});
