// Structured logs: one JSON object per line (Workers Logs and `wrangler tail` index their fields). Never a
// key, a token or a payload: ids, names, numbers and outcomes only. `LOGS=off` silences them (the test pool).
export function logLine(env: { LOGS?: string }, fields: Record<string, unknown>): void {
  if (env.LOGS === "off") return;
  console.log(JSON.stringify(fields));
}
