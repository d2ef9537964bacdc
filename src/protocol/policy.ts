// A session's policy (docs/guides/tools-and-permissions.md): which permission classes of tools are exposed, and the workspace root.
import { z } from "zod";
import { PERMISSION_CLASSES, type PermissionClass } from "./tool-classes";
import { normalizeWorkspaceRoot, refusedPathReason } from "./workspace-path";

export const DEFAULT_CLASSES: PermissionClass[] = PERMISSION_CLASSES.filter((c) => c !== "external_mutate" && c !== "secrets");

export const PolicySchema = z.strictObject({
  classes: z
    .array(z.enum(PERMISSION_CLASSES))
    .max(PERMISSION_CLASSES.length)
    .refine((c) => new Set(c).size === c.length, { message: "must not repeat a class" })
    .default(DEFAULT_CLASSES),
  workspace_root: z
    .string()
    .transform((root, ctx) => {
      const normalized = normalizeWorkspaceRoot(root);
      if (normalized === null) {
        ctx.addIssue({ code: "custom", message: refusedPathReason(root, 'must be an absolute path like "/" or "/project" without "." or ".." segments') });
        return z.NEVER;
      }
      return normalized;
    })
    .default("/"),
});
export type Policy = z.infer<typeof PolicySchema>;

export const DEFAULT_POLICY: Policy = PolicySchema.parse({});
