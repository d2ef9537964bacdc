// The execution tree of a turn (SPEC §8): its tool calls, with each sub-agent call containing the calls made
// inside it. A fold over the same events the channels carry, so the live log and a reload give one tree.
import type { EventOf, RuntimeEvent } from "../../protocol/events";
import type { TreeNode } from "../../protocol/views";
import { preview } from "./read-model";

export function buildTree(events: readonly RuntimeEvent[]): { version: 1; nodes: TreeNode[] } {
  const nodes = new Map<string, TreeNode>();
  const node = (e: EventOf<"tool.started" | "tool.result">): TreeNode => {
    const id = e.tool_call_id!;
    let n = nodes.get(id);
    if (!n) {
      n = {
        id,
        parent_id: e.parent_id ?? null,
        name: e.payload.name,
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
      n.is_error = e.payload.is_error;
      n.duration_ms = e.payload.metadata.execution_time_ms;
    } else if (e.type === "subagent.spawned" && e.parent_id) {
      const parent = nodes.get(e.parent_id);
      if (parent && !parent.title) parent.title = e.payload.title;
    }
  }
  const roots: TreeNode[] = [];
  for (const n of nodes.values()) {
    const parent = n.parent_id ? nodes.get(n.parent_id) : undefined;
    (parent ? parent.children : roots).push(n);
  }
  return { version: 1, nodes: roots };
}
