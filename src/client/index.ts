// The runtime's TypeScript client (no Cloudflare imports; Node 20+, browsers, workerd).

export { placesTurn, placeTurn } from "../views/conversation-order";
export type { SpanWait, TurnSpan, WaterfallRow } from "../views/turn-spans";
export { spanLabel, turnSpans, waitedMs, waterfall } from "../views/turn-spans";
export { runCli } from "./cli";
export type { CliDeps, CliIO, ParsedArgs } from "./cli-args";
export { EXIT, errorLine, intFlag, parseArgs, USAGE, UsageError } from "./cli-args";
export type { ApprovalAnswer, BackoffOptions, EventsOptions, FetchLike, RuntimeClientOptions, StreamStatus, SubmitAndWaitOptions } from "./client";
export { backoffDelay, RuntimeClient } from "./client";
export type { ResponseLike } from "./errors";
export { RuntimeError } from "./errors";
export type { FormatOptions } from "./format";
export { approvalPrompt, ChatRenderer, callLabel, formatTree, indent, oneLine, parseApproval, toolCard } from "./format";
export { formatMs, formatWaterfall } from "./format-timeline";
export type { WebSocketConstructorLike, WebSocketFactory, WebSocketLike } from "./socket";
export * from "./types";
