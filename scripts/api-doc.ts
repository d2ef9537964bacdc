// `npm run docs:api`: writes docs/reference/api.md from the operation declarations.
import { mkdirSync, writeFileSync } from "node:fs";
import { apiMarkdown } from "../src/protocol/api-doc";

mkdirSync(new URL("../docs/reference/", import.meta.url), { recursive: true });
writeFileSync(new URL("../docs/reference/api.md", import.meta.url), apiMarkdown());
console.log("wrote docs/reference/api.md");
