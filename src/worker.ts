// The runtime's own Worker: createRuntime with no in-process tools (a tenant's Worker passes its own: docs/guides/typescript-tools.md).
import { createRuntime } from "./runtime/create-runtime";

const runtime = createRuntime();

export const { SessionObject, RegistryObject, RateLimiter, IndexShardObject, ResourceMemoryObject, QuotaObject, EvalRunObject } = runtime.objects;
export const { CodeToolOutbound } = runtime.entrypoints;
export default runtime.worker;
