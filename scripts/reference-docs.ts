// `npm run docs:reference`: writes every generated reference of docs/reference/ from its source.
import { writeFileSync } from "node:fs";
import { REFERENCE_DOCS } from "../src/reference/index";

for (const [path, generate] of Object.entries(REFERENCE_DOCS)) {
  writeFileSync(new URL(`../${path}`, import.meta.url), generate());
  console.log(`wrote ${path}`);
}
