// `npm run docs:events`: writes docs/events.md from the event catalog.
import { writeFileSync } from "node:fs";
import { eventsMarkdown } from "../src/protocol/events-doc";

writeFileSync(new URL("../docs/events.md", import.meta.url), eventsMarkdown());
console.log("wrote docs/events.md");
