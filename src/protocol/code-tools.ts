// Code tools (docs/guides/code-tools.md): a tool whose source, an ES module whose default export is
// `async (args, ctx) => result`, is registered over HTTP and runs in a sandboxed Dynamic Worker per call.
import { z } from "zod";
import { refineSchemaPatterns } from "./safe-regex";

export const CODE_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** The most a source may hold; a tool that needs more belongs in a Worker of its own. */
export const MAX_SOURCE_BYTES = 256_000;
/** The longest a call may run (wall clock) and the most CPU it may take. */
export const MAX_TIMEOUT_MS = 120_000;
export const MAX_CPU_MS = 30_000;
/** A host as URL.host reads it: a DNS name or IPv4 address, and a port when not the scheme's default. */
const HOST = /^(?=.{1,253}(:\d{1,5})?$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;
const SECRET_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;

const inputSchema = z
  .record(z.string(), z.unknown())
  .refine((s) => s.type === "object", { message: 'must be a JSON Schema with type "object"' })
  .superRefine(refineSchemaPatterns);

export const CodeToolPutBody = z.strictObject({
  description: z.string().max(4000).default(""),
  input_schema: inputSchema.default({ type: "object", properties: {} }),
  source: z
    .string()
    .min(1, "must not be empty")
    .refine((s) => new TextEncoder().encode(s).byteLength <= MAX_SOURCE_BYTES, { message: `must be at most ${MAX_SOURCE_BYTES} bytes` }),
  timeout_ms: z.int().min(1).max(MAX_TIMEOUT_MS).default(10_000),
  cpu_ms: z.int().min(1).max(MAX_CPU_MS).default(1_000),
  allowed_hosts: z
    .array(z.string().regex(HOST, 'must be a host such as "api.example.com" or "127.0.0.1:8080" (lowercase, no scheme or path)'))
    .max(16)
    .default([]),
  /** Write-only: only their names are ever read back. Absent on a PUT: the stored values are kept. */
  secrets: z
    .record(z.string().regex(SECRET_NAME, "must match ^[A-Z_][A-Z0-9_]{0,63}$"), z.string().max(4096))
    .refine((r) => Object.keys(r).length <= 16, { message: "at most 16 secrets" })
    .optional(),
});
export type CodeToolInput = z.infer<typeof CodeToolPutBody>;

/** A stored version of a code tool, secrets included: only the registry and the sandbox see it whole. */
export interface CodeToolVersion extends Omit<CodeToolInput, "secrets"> {
  name: string;
  version: number;
  /** SHA-256 of the definition as it is read (the secrets' names, not their values). */
  hash: string;
  /** SHA-256 of the source: warm isolates are kept by it. */
  source_hash: string;
  secrets: Record<string, string>;
  created_at: number;
}

export const CodeToolDoc = z
  .object({
    name: z.string(),
    version: z.int().describe("1 for the first PUT; each PUT that changes anything adds one"),
    hash: z.string().describe("SHA-256 of this version's definition (secret names, never their values)"),
    source_hash: z.string(),
    description: z.string(),
    input_schema: z.record(z.string(), z.unknown()),
    source: z.string(),
    timeout_ms: z.int(),
    cpu_ms: z.int(),
    allowed_hosts: z.array(z.string()),
    secrets: z.array(z.string()).describe("the names of its secrets (their values are write-only)"),
    created_at: z.string().describe("when this version was stored (ISO 8601)"),
  })
  .meta({ id: "CodeTool" });
export type CodeToolView = z.infer<typeof CodeToolDoc>;

/** What reads show of a version: the secrets by name only. */
export function codeToolView(tool: CodeToolVersion): CodeToolView {
  const { secrets, created_at, ...rest } = tool;
  return { ...rest, secrets: Object.keys(secrets).sort(), created_at: new Date(created_at).toISOString() };
}

/** The hex SHA-256 of a text (a version's hash, the source's). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
