// The `code_tools` and `code_mode` phases of `npm run bench` (docs/guides/code-tools.md, code-mode.md): each
// runs its own script (bench/code-tools.mjs, bench/code-mode.mjs, also `npm run bench:code-tools` and
// `bench:code-mode`) as a child process, which starts its own bundled worker in Miniflare, so the two stay
// runnable alone and measure the same thing here. BENCH_ONE_LINE=1 makes the script print its result as one
// JSON line, the last of its output; its samples are left out of the report's JSON.
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const BENCH = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs bench/<script> with `env` added; its one-line JSON result. */
function runScript(script, env, say) {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [join(BENCH, script)],
      { env: { ...process.env, ...env, BENCH_ONE_LINE: "1" }, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${script} failed: ${err.message} ${stderr.slice(-500)}`));
        const last = stdout.trim().split("\n").at(-1) ?? "";
        try {
          const { samples: _samples, ...result } = JSON.parse(last);
          resolve(result);
        } catch {
          reject(new Error(`${script} printed no JSON result: ${last.slice(0, 200)}`));
        }
      },
    );
    say(`   ${script} (pid ${child.pid})`);
  });
}

export const codeTools = (_stack, cfg, say) => runScript("code-tools.mjs", { BENCH_CODE_RUNS: String(cfg.code.runs) }, say);
export const codeMode = (_stack, cfg, say) => runScript("code-mode.mjs", { BENCH_CODE_MODE_RUNS: String(cfg.code.runs) }, say);

export function codeToolRows(r, row, f) {
  row(
    "Code tool call, warm / cold isolate: added ms (below 0: faster)",
    `${f(r.added_warm_ms, 1)} / ${f(r.added_cold_ms, 1)}`,
    `against a webhook tool call (${f(r.webhook_call_ms, 1)} ms): code tool ${f(r.code_warm_call_ms, 1)} ms warm, ${f(r.code_cold_call_ms, 1)} ms cold (a new version); ${r.runs} runs each`,
  );
}

export function codeModeRows(r, row, f) {
  row(
    `${r.calls} calls: one code-mode script / ${r.calls} model steps`,
    `${f(r.code_mode_turn_ms, 1)} / ${f(r.model_steps_turn_ms, 1)} ms`,
    `turn time with the zero-latency model; ${r.model_calls.code_mode} / ${r.model_calls.model_steps} model calls, ${f(r.model_request_bytes.code_mode / 1024, 1)} / ${f(r.model_request_bytes.model_steps / 1024, 1)} KiB sent to the model; ${r.runs} runs each`,
  );
}
