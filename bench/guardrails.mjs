#!/usr/bin/env node
// `npm run bench:guardrails`: what the deterministic guardrail rules (regex, pii, max_length) cost per message,
// in Node (the same engine code the Worker runs: src/runtime/guardrails/run.ts), on messages of 1 KB and
// 100 KB with a little PII in them. Prints the median microseconds of one check, detecting (block) and
// redacting. Never an assertion; docs/performance.md records the numbers.
import { checkStage } from "../src/runtime/guardrails/run.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 41);
const SENTENCE = "The quarterly report is attached; please review the figures before Thursday's meeting with the team. ";
const PII = "Contact jane.doe@example.com or +44 20 7946 0958 about card 4111 1111 1111 1111. ";

/** A message of about `bytes`: prose, with one PII sentence per kilobyte. */
function message(bytes) {
  let text = "";
  while (text.length < bytes) text += text.length % 1024 < SENTENCE.length ? PII : SENTENCE;
  return text.slice(0, bytes);
}

const RULES = {
  regex: { type: "regex", pattern: "ignore (all )?previous instructions|\\bpassword\\s*[:=]", flags: "i" },
  pii: { type: "pii", entities: ["email", "phone", "credit_card", "iban", "ip_address", "us_ssn"] },
  max_length: { type: "max_length", chars: 200_000 },
};

const noDecide = async () => ({ flagged: false });

/** Median microseconds of one check, timing batches so that 1 KB checks are above the timer's resolution. */
async function median(guardrails, text) {
  const batch = text.length > 10_000 ? 5 : 500;
  const times = [];
  for (let s = 0; s < SAMPLES + 3; s++) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) await checkStage(guardrails, "input", text, noDecide);
    if (s >= 3) times.push(((performance.now() - t0) * 1000) / batch); // the first batches warm the JIT up
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const rows = [];
for (const [kind, rule] of Object.entries(RULES)) {
  for (const action of ["block", "redact"]) {
    for (const size of [1024, 100 * 1024]) {
      // Each rule object is new, so each row compiles its rule once, as a new config would.
      const us = await median({ input: [{ ...rule, action }] }, message(size));
      rows.push({ rule: kind, action, message: size === 1024 ? "1 KB" : "100 KB", "median µs": us.toFixed(2) });
    }
  }
}
console.table(rows);
