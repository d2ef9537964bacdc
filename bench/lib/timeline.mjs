// Where a turn's time goes inside the session object, from its events' timestamps (Date.now in workerd).

/**
 * Where the time of a turn went, from its events' timestamps: model calls (model.requested to
 * model.completed), tool phases (model.completed to the step's last tool.result), and the rest (before the
 * first model call, between steps, and after the last one).
 */
export function splitTurn(events) {
  const byType = (t) => events.filter((e) => e.type === t);
  const submitted = byType("turn.submitted")[0];
  const end = events.find((e) => e.type === "turn.completed");
  let model = 0;
  let tools = 0;
  const requested = byType("model.requested");
  for (const r of requested) {
    const done = events.find((e) => e.type === "model.completed" && e.step_id === r.step_id);
    if (done) model += done.timestamp - r.timestamp;
    const results = events.filter((e) => e.type === "tool.result" && e.step_id === r.step_id);
    if (done && results.length > 0) tools += Math.max(...results.map((e) => e.timestamp)) - done.timestamp;
  }
  const total = end.timestamp - submitted.timestamp;
  return { total, model_calls: model, tool_phases: tools, other: total - model - tools, steps: requested.length };
}
