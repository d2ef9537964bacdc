// The runtime's TypeScript client (no Cloudflare imports; Node 20+, browsers, workerd).
export { RuntimeClient, backoffDelay } from "./client";
export type { ApprovalAnswer, BackoffOptions, EventsOptions, FetchLike, RuntimeClientOptions, StreamStatus, SubmitAndWaitOptions } from "./client";
export { RuntimeError } from "./errors";
export type { ResponseLike } from "./errors";
export type { WebSocketConstructorLike, WebSocketFactory, WebSocketLike } from "./socket";
export * from "./types";
export { approvalPrompt, callLabel, ChatRenderer, formatTree, indent, oneLine, parseApproval, toolCard } from "./format";
export type { FormatOptions } from "./format";
export { EXIT, errorLine, intFlag, parseArgs, runCli, USAGE, UsageError } from "./cli";
export type { CliDeps, CliIO, ParsedArgs } from "./cli";
