// The package's entry (`import { createRuntime, tool } from "agent-runtime"`): the runtime for a tenant's own
// Worker, with in-process tools written with the AI SDK's `tool()` (docs/guides/typescript-tools.md).
export { type Tool, tool } from "ai";
export type { InProcessToolContext, InProcessToolOptions, InProcessToolSpec } from "../engine/tools/in-process";
export type { Env } from "../env";
export type { PermissionClass } from "../protocol/tool-classes";
export { createRuntime, type Runtime, type RuntimeOptions } from "./create-runtime";
