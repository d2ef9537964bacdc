// A2A 1.0 (docs/guides/a2a.md) on the wire, shared by the server (src/routes/a2a.ts), the fold of a task
// (src/views/a2a-task.ts) and the client tool (src/engine/tools/a2a-tool.ts): the JSON-RPC envelope, the
// methods' params, parts and messages in ProtoJSON (camelCase, SCREAMING_SNAKE_CASE enums), and the error codes.
import { z } from "zod";

export const A2A_VERSION = "1.0";
export const A2A_VERSION_HEADER = "A2A-Version";

export const TASK_STATES = [
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_AUTH_REQUIRED",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED",
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** The states after which nothing changes. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"]);
/** The states a stream ends at: terminal, or waiting for the client. */
export const settled = (state: TaskState) => TERMINAL_STATES.has(state) || state === "TASK_STATE_INPUT_REQUIRED" || state === "TASK_STATE_AUTH_REQUIRED";

/** The JSON-RPC error codes: JSON-RPC's own, then A2A's. */
export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotSupported: -32003,
  unsupportedOperation: -32004,
  contentTypeNotSupported: -32005,
  invalidAgentResponse: -32006,
  extendedCardNotConfigured: -32007,
  versionNotSupported: -32009,
} as const;
export type RpcErrorName = keyof typeof RPC_ERRORS;

/** A JSON-RPC error an A2A method answers (thrown by the handlers, turned into the error object by the route). */
export class RpcError extends Error {
  constructor(
    readonly kind: RpcErrorName,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
  get code(): number {
    return RPC_ERRORS[this.kind];
  }
}

export const RpcId = z.union([z.string().max(200), z.number(), z.null()]);
export type RpcId = z.infer<typeof RpcId>;

export const RpcRequest = z.object({ jsonrpc: z.literal("2.0"), id: RpcId.optional(), method: z.string().max(100), params: z.unknown().optional() });

const Metadata = z.record(z.string(), z.unknown());

/** One part: exactly one of text, raw (base64), url and data. */
export const Part = z
  .object({
    text: z.string().max(200_000).optional(),
    raw: z.string().max(1_400_000).optional(),
    url: z.url().max(2000).optional(),
    data: z.unknown().optional(),
    mediaType: z.string().max(200).optional(),
    filename: z.string().max(255).optional(),
    metadata: Metadata.optional(),
  })
  .refine((p) => [p.text, p.raw, p.url, p.data].filter((v) => v !== undefined).length === 1, "needs exactly one of text, raw, url and data");
export type Part = z.infer<typeof Part>;

export const Message = z.object({
  messageId: z.string().min(1).max(200),
  contextId: z.string().max(200).optional(),
  taskId: z.string().max(200).optional(),
  role: z.enum(["ROLE_USER", "ROLE_AGENT"]),
  parts: z.array(Part).min(1, "must not be empty").max(20, "must have at most 20 parts"),
  metadata: Metadata.optional(),
  extensions: z.array(z.string()).optional(),
  referenceTaskIds: z.array(z.string()).optional(),
});
export type Message = z.infer<typeof Message>;

/** How the runtime authenticates to a push receiver: an `Authorization: <scheme> <credentials>` header. */
const PushAuthentication = z.object({ scheme: z.string().min(1).max(50), credentials: z.string().max(2000).optional() });

/** A task's push notification config (CreateTaskPushNotificationConfig's params, 1.0's flat shape). */
export const TaskPushNotificationConfig = z.object({
  tenant: z.string().optional(),
  id: z.string().min(1).max(100).optional(),
  taskId: z.string().min(1).max(200),
  url: z.url().max(2000),
  token: z.string().min(1).max(500).optional(),
  authentication: PushAuthentication.optional(),
  /** Not in A2A: the Standard Webhooks secret deliveries are signed with (default: generated, answered once). */
  signingSecret: z.string().min(16).max(200).optional(),
});
export type TaskPushNotificationConfig = z.infer<typeof TaskPushNotificationConfig>;
/** The push config fields a SendMessage may carry (its task is the one the message makes). */
export const MessagePushConfig = TaskPushNotificationConfig.omit({ taskId: true }).extend({ taskId: z.string().max(200).optional() });

export const PushConfigIdParams = z.object({ tenant: z.string().optional(), taskId: z.string().min(1).max(200), id: z.string().min(1).max(100) });
export const ListPushConfigParams = z.object({
  tenant: z.string().optional(),
  taskId: z.string().min(1).max(200),
  pageSize: z.int().min(1).max(100).optional(),
  pageToken: z.string().max(200).optional(),
});

export const SendMessageParams = z.object({
  tenant: z.string().optional(),
  message: Message,
  configuration: z
    .object({
      acceptedOutputModes: z.array(z.string()).optional(),
      historyLength: z.int().min(0).optional(),
      /** 1.0 names it `returnImmediately`; the earlier drafts' `blocking: false` means the same. */
      returnImmediately: z.boolean().optional(),
      blocking: z.boolean().optional(),
      taskPushNotificationConfig: MessagePushConfig.optional(),
    })
    .optional(),
  metadata: Metadata.optional(),
});
export type SendMessageParams = z.infer<typeof SendMessageParams>;

export const TaskIdParams = z.object({ tenant: z.string().optional(), id: z.string().min(1).max(200), historyLength: z.int().min(0).optional() });

export const ListTasksParams = z.object({
  tenant: z.string().optional(),
  contextId: z.string().max(200).optional(),
  status: z.enum(TASK_STATES).optional(),
  pageSize: z.int().min(1).max(100).optional(),
  pageToken: z.string().max(200).optional(),
  historyLength: z.int().min(0).optional(),
  /** Only tasks whose status changed after this time (RFC 3339). */
  statusTimestampAfter: z.iso.datetime({ offset: true }).optional(),
  includeArtifacts: z.boolean().optional(),
});

export interface TaskStatus {
  state: TaskState;
  timestamp: string;
  message?: A2aMessage;
}
export type A2aMessage = Omit<Message, "role" | "parts"> & { role: "ROLE_USER" | "ROLE_AGENT"; parts: Part[] };
export interface Artifact {
  artifactId: string;
  name?: string;
  parts: Part[];
}
export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  artifacts: Artifact[];
  history: A2aMessage[];
  metadata?: Record<string, unknown>;
}

/** One event of a stream (StreamResponse): named by its one member. */
export type StreamResponse =
  | { task: Task }
  | { message: A2aMessage }
  | { statusUpdate: { taskId: string; contextId: string; status: TaskStatus } }
  | { artifactUpdate: { taskId: string; contextId: string; artifact: Artifact; append: boolean; lastChunk: boolean } };

/** The text of parts (data parts as JSON). */
export function partsText(parts: readonly Part[]): string {
  return parts.flatMap((p) => (p.text !== undefined ? [p.text] : p.data !== undefined ? [JSON.stringify(p.data)] : p.url ? [p.url] : [])).join("\n\n");
}
