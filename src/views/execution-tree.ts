// The execution tree of a turn (docs/architecture.md): its tool calls, with each sub-agent call containing the calls made
// inside it. Drawn from the turn's spans (views/turn-spans.ts), the one fold the waterfall and the OTLP export share,
// over the same events the channels carry, so the live log and a reload give one tree.
import type { RuntimeEvent } from "../protocol/events";
import type { HumanWait, TreeNode } from "../protocol/views";
import { preview } from "./read-model";
import { type SpanCall, type SpanWait, turnSpans } from "./turn-spans";

/** The call's latest wait on a person, as the tree shows it. */
function humanWait(w: SpanWait): HumanWait {
  return {
    kind: w.kind,
    action_id: w.action_id,
    asked_at: w.start,
    decided_at: w.end,
    duration_ms: w.end === null ? null : w.end - w.start,
    decision: w.outcome,
    by: w.by,
    ...(w.quorum ? { approved_by: w.approvals.map((a) => a.by) } : {}),
  };
}

function treeNode(call: SpanCall, waits: SpanWait[]): TreeNode {
  const wait = waits.at(-1);
  return {
    id: call.id,
    parent_id: call.parent_id,
    name: call.name,
    ...(call.title !== null ? { title: call.title } : {}),
    args_preview: preview(call.args),
    result_preview: preview(call.output),
    is_error: call.is_error,
    duration_ms: call.duration_ms,
    ...(wait ? { human_wait: humanWait(wait) } : {}),
    children: [],
  };
}

export function buildTree(events: readonly RuntimeEvent[]): { version: 1; nodes: TreeNode[] } {
  const nodes = new Map<string, TreeNode>();
  for (const s of turnSpans(events)) if (s.call) nodes.set(s.call.id, treeNode(s.call, s.waits));
  const roots: TreeNode[] = [];
  for (const n of nodes.values()) {
    const parent = n.parent_id ? nodes.get(n.parent_id) : undefined;
    (parent ? parent.children : roots).push(n);
  }
  return { version: 1, nodes: roots };
}
