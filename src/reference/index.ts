// The generated references of docs/reference/, by path: `npm run docs:reference` writes them all, and
// test/node/reference-docs.test.ts fails when a committed one differs from what its source generates.
import { apiMarkdown } from "../protocol/api-doc";
import { eventsMarkdown } from "../protocol/events-doc";
import { clientMarkdown } from "./client";
import { configurationMarkdown } from "./configuration";
import { errorsMarkdown } from "./errors";
import { responsesMarkdown } from "./responses";
import { websocketMarkdown } from "./websocket";

export const REFERENCE_DOCS: Record<string, () => string> = {
  "docs/reference/api.md": apiMarkdown,
  "docs/reference/events.md": eventsMarkdown,
  "docs/reference/configuration.md": configurationMarkdown,
  "docs/reference/websocket.md": websocketMarkdown,
  "docs/reference/errors.md": errorsMarkdown,
  "docs/reference/client.md": clientMarkdown,
  "docs/reference/responses.md": responsesMarkdown,
};
