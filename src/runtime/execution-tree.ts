// The execution tree of a turn (SPEC §8): its tool calls, with each sub-agent call containing the calls made
// inside it. A fold over the same events the channels carry, so the live log and a reload give one tree.
import type { RuntimeEvent } from "../protocol/events";
import { preview } from "./read-model";

export interface TreeNode {
  id: string;
  parent_id: string | null;
  name: string;
  title?: string;
  args_preview: string | null;
  result_preview: string | null;
  is_error: boolean;
  /** Null while the call runs. */
  duration_ms: number | null;
  children: TreeNode[];
}

export function buildTree(events: readonly RuntimeEvent[]): { version: 1; nodes: TreeNode[] } {
  const nodes = new Map<string, TreeNode>();
  const node = (e: RuntimeEvent): TreeNode => {
    const id = e.tool_call_id!;
    let n = nodes.get(id);
    if (!n) {
      n = {
        id,
        parent_id: e.parent_id ?? null,
        name: String(e.payload.name ?? ""),
        args_preview: null,
        result_preview: null,
        is_error: false,
        duration_ms: null,
        children: [],
      };
      nodes.set(id, n);
    }
    return n;
  };
  for (const e of events) {
    if (e.type === "tool.started") {
      const n = node(e);
      n.args_preview = preview(e.payload.args);
      const title = (e.payload.args as { title?: unknown } | undefined)?.title;
      if (typeof title === "string") n.title = title;
    } else if (e.type === "tool.result") {
      const n = node(e);
      n.result_preview = preview(e.payload.output);
      n.is_error = e.payload.is_error === true;
      const metadata = e.payload.metadata as { execution_time_ms?: number } | undefined;
      n.duration_ms = metadata?.execution_time_ms ?? null;
    } else if (e.type === "subagent.spawned" && e.parent_id) {
      const parent = nodes.get(e.parent_id);
      if (parent && !parent.title && typeof e.payload.title === "string") parent.title = e.payload.title;
    }
  }
  const roots: TreeNode[] = [];
  for (const n of nodes.values()) {
    const parent = n.parent_id ? nodes.get(n.parent_id) : undefined;
    (parent ? parent.children : roots).push(n);
  }
  return { version: 1, nodes: roots };
}
