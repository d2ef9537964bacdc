// One bash process for the blocks of a page, so that what a block sets (variables, the directory) is there for
// the next, as in a reader's terminal. Each block is sourced with `set -eo pipefail`: a failing command fails it.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface BlockRun {
  status: number;
  output: string;
}

export class ShellSession {
  private readonly bash: ChildProcess;
  private stdout = "";
  private waiting: (() => void) | null = null;
  private exited: number | null = null;
  private n = 0;

  constructor(
    cwd: string,
    env: Record<string, string>,
    private readonly scratch: string,
  ) {
    this.bash = spawn("bash", ["--noprofile", "--norc"], { cwd, env, stdio: ["pipe", "pipe", "inherit"], detached: true });
    this.bash.stdout!.on("data", (d) => {
      this.stdout += String(d);
      this.waiting?.();
    });
    this.bash.on("exit", (code) => {
      this.exited = code ?? 1;
      this.waiting?.();
    });
  }

  /** Runs a script in the session; its output is stdout and stderr together. */
  async run(script: string, timeoutMs: number): Promise<BlockRun> {
    const id = ++this.n;
    const file = join(this.scratch, `block-${id}.sh`);
    const out = join(this.scratch, `block-${id}.out`);
    writeFileSync(file, `${script}\n`);
    writeFileSync(out, "");
    const marker = `__doc_block_${id}_done__`;
    this.bash.stdin!.write(`set -eo pipefail; . '${file}' > '${out}' 2>&1 < /dev/null; set +eo pipefail; echo "${marker} $?"\n`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.stdout.match(new RegExp(`${marker} (\\d+)`));
      if (m) return { status: Number(m[1]), output: readFileSync(out, "utf8") };
      if (this.exited !== null) return { status: this.exited, output: `${readFileSync(out, "utf8")}\n(the shell exited with ${this.exited})` };
      if (Date.now() > deadline) {
        this.close();
        return { status: 124, output: `${readFileSync(out, "utf8")}\n(timed out after ${timeoutMs} ms)` };
      }
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 200);
      });
      this.waiting = null;
    }
  }

  close(): void {
    try {
      process.kill(-this.bash.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
