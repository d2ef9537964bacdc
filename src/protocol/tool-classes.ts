// Permission classes of tools (docs/guides/tools-and-permissions.md): what a session's policy enables or not.
export const PERMISSION_CLASSES = ["safe", "knowledge", "network", "workspace_write", "external_mutate", "subagent", "secrets"] as const;
export type PermissionClass = (typeof PERMISSION_CLASSES)[number];
