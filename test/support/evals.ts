// Helpers of the eval tests (test/objects/evals/): a dataset of sums the demo model's calculator answers, and
// waiting for a run to finish.
import { expect } from "vitest";
import { api } from "./api";

/** Ten sums for the demo model's calculator; items 3 and 7 expect a wrong answer. */
export const SUMS = Array.from({ length: 10 }, (_, i) => ({
  input: `What is ${i} + 1?`,
  expected: `The answer is ${i === 3 || i === 7 ? i : i + 1}.`,
  metadata: { i },
}));

export const suffix = () => crypto.randomUUID().slice(0, 8);

/** Polls the run until it has completed (never more than `maxRunning` cases running at a poll); answers it. */
export async function waitForRun(id: string, timeoutMs = 15_000, maxRunning = 8): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await api("GET", `/v1/evals/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.progress.running).toBeLessThanOrEqual(maxRunning);
    if (res.body.status === "completed") return res.body;
    if (Date.now() > until) throw new Error(`run ${id} did not finish: ${JSON.stringify(res.body.progress)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
