// The execution tree of a turn (docs/architecture.md): its tool calls, with each sub-agent call containing the calls made
// inside it. A fold over the same events the channels carry, so the live log and a reload give one tree.
import { type EventTable, ignored, onEvent } from "../../protocol/event-table";
import type { EventOf, RuntimeEvent } from "../../protocol/events";
import type { TreeNode } from "../../protocol/views";
import { preview } from "./read-model";

type Nodes = Map<string, TreeNode>;

function node(nodes: Nodes, e: EventOf<"tool.started" | "tool.result" | "action.required">): TreeNode {
  const id = e.tool_call_id!;
  let n = nodes.get(id);
  if (!n) {
    n = {
      id,
      parent_id: e.parent_id ?? null,
      // A call that waits for a person shows up first in action.required.
      name: e.type === "action.required" ? e.payload.tool_name : e.payload.name,
      args_preview: null,
      result_preview: null,
      is_error: false,
      duration_ms: null,
      children: [],
    };
    nodes.set(id, n);
  }
  return n;
}

const FOLD: EventTable<[Nodes], void> = {
  ...ignored(
    "action.reminder",
    "turn.rolled_back",
    "tool.result.late",
    "session.created",
    "session.forked",
    "turn.submitted",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "turn.cancelled",
    "schedule.created",
    "schedule.fired",
    "schedule.deleted",
    "queue.changed",
    "run.status",
    "model.requested",
    "model.delta",
    "model.completed",
    "reasoning.summary",
    "tool.catalog.resolved",
    "mcp.progress",
    "subagent.completed",
    "subagent.failed",
    "budget.exceeded",
    "context.compaction.started",
    "context.compaction.completed",
    "output.spilled",
    "artifact.created",
    "memory.updated",
    "memory.loaded",
    "memory.recalled",
    "message.injected",
    "cost.recorded",
    "runtime.warning",
    "runtime.error",
    "replay.diverged",
    "replay.completed",
    "model.fallback",
    "guardrail.checked",
  ),
  "tool.started": (e, nodes) => {
    const n = node(nodes, e);
    n.args_preview = preview(e.payload.args);
    const title = (e.payload.args as { title?: unknown } | undefined)?.title;
    if (typeof title === "string") n.title = title;
  },
  "tool.result": (e, nodes) => {
    const n = node(nodes, e);
    n.result_preview = preview(e.payload.output);
    n.is_error = e.payload.is_error;
    n.duration_ms = e.payload.metadata.execution_time_ms;
  },
  "action.required": (e, nodes) => {
    const n = node(nodes, e);
    n.args_preview ??= preview(e.payload.args);
    const quorum = e.payload.approvals_required ? { approved_by: [] } : {};
    n.human_wait = {
      kind: e.payload.kind,
      action_id: e.action_id!,
      asked_at: e.timestamp,
      decided_at: null,
      duration_ms: null,
      decision: null,
      by: null,
      ...quorum,
    };
  },
  "action.approval.recorded": (e, nodes) => {
    const wait = nodes.get(e.tool_call_id!)?.human_wait;
    if (wait) wait.approved_by = [...(wait.approved_by ?? []), e.payload.by];
  },
  "action.resolved": (e, nodes) => {
    const wait = nodes.get(e.tool_call_id!)?.human_wait;
    if (!wait) return;
    Object.assign(wait, { decided_at: e.timestamp, duration_ms: e.timestamp - wait.asked_at, decision: e.payload.decision, by: e.payload.by });
  },
  "subagent.spawned": (e, nodes) => {
    const parent = e.parent_id ? nodes.get(e.parent_id) : undefined;
    if (parent && !parent.title) parent.title = e.payload.title;
  },
};

export function buildTree(events: readonly RuntimeEvent[]): { version: 1; nodes: TreeNode[] } {
  const nodes: Nodes = new Map();
  for (const e of events) onEvent(FOLD, e, nodes);
  const roots: TreeNode[] = [];
  for (const n of nodes.values()) {
    const parent = n.parent_id ? nodes.get(n.parent_id) : undefined;
    (parent ? parent.children : roots).push(n);
  }
  return { version: 1, nodes: roots };
}
