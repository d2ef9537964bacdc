// Structured logs: one JSON object per line (Workers Logs and `wrangler tail` index their fields). Never a
// key, a token or a payload: ids, names, numbers and outcomes only. `LOGS` set names the kinds (`log` field)
// to write, comma-separated: `LOGS=off` silences them all (the test pool), `LOGS=turn` keeps the turn ends
// only (`npm start`, where wrangler already prints a line per request).
// A line is written after the current task (the response, the event broadcast) has gone out: a log write
// is slow where a DevTools session relays it (`wrangler dev`: 4-5 ms of a one-call turn), and no client
// should wait for it. The promise settles once it is written (a Worker keeps it alive with waitUntil).
export function logLine(env: { LOGS?: string }, fields: Record<string, unknown>): Promise<void> {
  if (env.LOGS && !env.LOGS.split(",").includes(String(fields.log))) return Promise.resolve();
  const line = JSON.stringify(fields);
  return new Promise((written) =>
    setTimeout(() => {
      console.log(line);
      written();
    }, 0),
  );
}
