// docs/events.md is generated from the catalog: this fails when the committed file is stale
// (regenerate it with `npm run docs:events`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/protocol/events";
import { eventsMarkdown } from "../../src/protocol/events-doc";

describe("docs/events.md", () => {
  it("is what the event catalog generates, with a row for every event type", () => {
    const committed = readFileSync(join(import.meta.dirname, "..", "..", "docs", "events.md"), "utf8");
    expect(committed, "docs/events.md is stale: run npm run docs:events").toBe(eventsMarkdown());
    for (const type of EVENT_TYPES) expect(committed).toContain(`| \`${type}\` |`);
  });
});
