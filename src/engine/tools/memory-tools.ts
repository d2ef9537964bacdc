// memory_read / memory_write / memory_list: a per-session key-value memory kept in the session object.
import { type ToolDefinition, ToolError } from "./types";

const MAX_VALUE_BYTES = 100_000;
const LIST_LIMIT = 1000;
const KEY_SCHEMA = { type: "string", minLength: 1, maxLength: 256 };

export const memoryTools: ToolDefinition[] = [
  {
    name: "memory_read",
    description: "Reads a value this session stored in memory.",
    parameters: { type: "object", properties: { key: KEY_SCHEMA }, required: ["key"], additionalProperties: false },
    permission_class: "knowledge",
    parallel_safe: true,
    idempotent: true,
    async execute(args, ctx) {
      const value = ctx.memory.get(String(args.key));
      if (value === null) throw new ToolError(`Nothing is stored under "${String(args.key)}"`);
      return value;
    },
  },
  {
    name: "memory_write",
    description: "Stores a value in this session's memory under a key (replacing any earlier value).",
    parameters: {
      type: "object",
      properties: { key: KEY_SCHEMA, value: { type: "string" } },
      required: ["key", "value"],
      additionalProperties: false,
    },
    permission_class: "workspace_write",
    parallel_safe: true,
    idempotent: true,
    lock: "memory",
    async execute(args, ctx) {
      const value = String(args.value);
      if (new TextEncoder().encode(value).byteLength > MAX_VALUE_BYTES) throw new ToolError(`Value is larger than ${MAX_VALUE_BYTES} bytes`);
      ctx.memory.set(String(args.key), value);
      return { key: args.key, stored: true };
    },
  },
  {
    name: "memory_list",
    description: "Lists the keys in this session's memory, optionally those starting with a prefix.",
    parameters: { type: "object", properties: { prefix: { type: "string" } }, additionalProperties: false },
    permission_class: "knowledge",
    parallel_safe: true,
    idempotent: true,
    async execute(args, ctx) {
      return { keys: ctx.memory.list(typeof args.prefix === "string" ? args.prefix : "", LIST_LIMIT) };
    },
  },
];
