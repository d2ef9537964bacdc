// The files of docs/reference/ are generated from the code: this fails when a committed one is stale
// (regenerate them with `npm run docs:reference`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AgentConfigSchema } from "../../src/protocol/agent-config";
import { CLOSE_CODES } from "../../src/protocol/close-codes";
import { ERROR_CODES } from "../../src/protocol/errors";
import { EVENT_TYPES } from "../../src/protocol/events";
import { ClientFrame } from "../../src/protocol/wire";
import { REFERENCE_DOCS } from "../../src/reference/index";

const ROOT = join(import.meta.dirname, "..", "..");
const committed = (path: string) => readFileSync(join(ROOT, path), "utf8");

describe("docs/reference", () => {
  it.each(Object.keys(REFERENCE_DOCS))("%s is what its source generates", (path) => {
    expect(committed(path), `${path} is stale: run npm run docs:reference`).toBe(REFERENCE_DOCS[path]!());
  });

  it("has a row for every event type, agent config field, client frame, close code, error code and the client's methods", () => {
    const events = committed("docs/reference/events.md");
    for (const type of EVENT_TYPES) expect(events).toContain(`| \`${type}\` |`);
    const config = committed("docs/reference/configuration.md");
    for (const field of Object.keys(AgentConfigSchema.shape)) expect(config).toContain(`| \`${field}\` |`);
    const ws = committed("docs/reference/websocket.md");
    for (const frame of ClientFrame.options) expect(ws).toContain(`| \`${frame.shape.type.value}\` |`);
    for (const { code } of Object.values(CLOSE_CODES)) expect(ws).toContain(`| ${code} |`);
    const errors = committed("docs/reference/errors.md");
    for (const [code, { status }] of Object.entries(ERROR_CODES)) expect(errors).toContain(`| \`${code}\` | ${status} |`);
    const client = committed("docs/reference/client.md");
    for (const method of ["answer", "uploadFile", "getMemory", "patchMemory", "searchMemory", "eraseResource", "submitAndWait"])
      expect(client).toContain(`| \`${method}(`);
  });
});
