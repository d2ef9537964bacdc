// The package's entry (`import { createRuntime, tool, z } from "agent-runtime"`): the runtime for a tenant's own
// Worker, with in-process tools written with the AI SDK's `tool()` and zod (docs/guides/typescript-tools.md).
// `z` is the runtime's own zod, so a tool's schema and the runtime agree on one copy.
export { type Tool, tool } from "ai";
export { z } from "zod";
export type { InProcessToolContext, InProcessToolOptions, InProcessToolSpec } from "../engine/tools/in-process";
export type { Env } from "../env";
export type { PermissionClass } from "../protocol/tool-classes";
export { createRuntime, type Runtime, type RuntimeOptions } from "./create-runtime";
