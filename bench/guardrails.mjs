#!/usr/bin/env node
// `npm run bench:guardrails`: what the deterministic guardrail rules (regex, pii, max_length) cost per message,
// in Node (the same engine code the Worker runs: src/engine/guardrails/run.ts), on messages of 1 KB and
// 100 KB with a little PII in them. Prints the median microseconds of one check, detecting (block) and
// redacting. Then hostile texts of 100,000 characters (runs that made backtracking patterns quadratic or
// exponential) through every built-in rule and four catastrophic admin patterns (two exponential under
// backtracking, two whose find-all reads ahead to a run's end for each match, quadratic even on RE2, which a
// redaction stops at its bound): the worst milliseconds of a check, which should stay within 50 ms. Never an
// assertion; docs/performance.md records the numbers.
import { checkStage } from "../src/engine/guardrails/run.ts";

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

const HOSTILE_CHARS = 100_000;
const run = (unit) => unit.repeat(Math.ceil(HOSTILE_CHARS / unit.length)).slice(0, HOSTILE_CHARS);
const HOSTILE = {
  "a.": run("a."),
  "a@": run("a@"),
  "a@b.": run("a@b."),
  "digits and spaces": run("4 "),
  "digits and dashes": run("1-"),
  "digits and dots": run("1."),
  digits: run("4"),
  "IBAN-like": run("GB82 "),
  "hex and colons": run("ab:"),
  "(12) ": run("(12) "),
  "+1 ": run("+1 "),
  a: run("a"),
  "a then b": `${run("a").slice(1)}b`,
};
const HOSTILE_RULES = {
  ...Object.fromEntries(["email", "phone", "credit_card", "iban", "ip_address", "us_ssn"].map((e) => [`pii ${e}`, { type: "pii", entities: [e] }])),
  "regex ^(a+)+$": { type: "regex", pattern: "^(a+)+$" },
  "regex ^(a|aa)+$": { type: "regex", pattern: "^(a|aa)+$" },
  "regex \\w+@x|\\w": { type: "regex", pattern: "\\w+@x|\\w" },
  "regex [\\w.]+@corp\\.example|\\d": { type: "regex", pattern: "[\\w.]+@corp\\.example|\\d" },
  max_length: { type: "max_length", chars: 200_000 },
};
const HOSTILE_SAMPLES = 5;
const hostile = [];
for (const [name, rule] of Object.entries(HOSTILE_RULES)) {
  for (const action of ["block", "redact"]) {
    const guardrails = { input: [{ ...rule, action }] };
    let worst = { ms: 0, input: "" };
    for (const [input, text] of Object.entries(HOSTILE)) {
      const times = [];
      await checkStage(guardrails, "input", text, noDecide); // warms the JIT up
      for (let s = 0; s < HOSTILE_SAMPLES; s++) {
        const t0 = performance.now();
        await checkStage(guardrails, "input", text, noDecide);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      const ms = times[Math.floor(times.length / 2)];
      if (ms >= worst.ms) worst = { ms, input };
    }
    hostile.push({ rule: name, action, "worst input": worst.input, "median ms": worst.ms.toFixed(2), "within 50 ms": worst.ms <= 50 ? "yes" : "NO" });
  }
}
console.log(`Hostile texts of ${HOSTILE_CHARS} characters (${Object.keys(HOSTILE).length} kinds), the slowest kind per rule:`);
console.table(hostile);
