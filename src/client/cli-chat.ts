// `agent-runtime chat`: an interactive session in the terminal, with approvals and ask_user questions asked
// inline and a running turn picked up again on --session.

import type { OnBusy } from "../protocol/busy";
import { parseAnswer, questionPrompt } from "./cli-answer";
import { anySignal, type CliIO, EXIT, errorLine, intFlag, type ParsedArgs, str, UsageError } from "./cli-args";
import type { RuntimeClient, StreamStatus, SubmitAndWaitOptions } from "./client";
import { RuntimeError } from "./errors";
import { approvalPrompt, ChatRenderer, type FormatOptions, parseApproval } from "./format";
import type { RuntimeEvent, TerminalEvent } from "./types";

// The strategies, spelled out here so the client imports nothing of the server's at run time; `satisfies`
// fails to compile when the server's list changes.
const STRATEGIES = Object.keys({ enqueue: 1, reject: 1, interrupt: 1, rollback: 1, inject: 1 } satisfies Record<OnBusy, 1>);

/** --on-busy and --debounce-ms as the turns' options. */
function busyOptions(flags: ParsedArgs["flags"]): Pick<SubmitAndWaitOptions, "on_busy" | "debounce_ms"> {
  const onBusy = str(flags["on-busy"]);
  if (flags["on-busy"] !== undefined && !(onBusy && STRATEGIES.includes(onBusy))) {
    throw new UsageError(`--on-busy must be one of ${STRATEGIES.join(", ")}`);
  }
  const debounce = intFlag(flags, "debounce-ms", 0);
  return { ...(onBusy ? { on_busy: onBusy as OnBusy } : {}), ...(debounce > 0 ? { debounce_ms: debounce } : {}) };
}

export async function chat(client: RuntimeClient, io: CliIO, flags: ParsedArgs["flags"], fmt: FormatOptions): Promise<number> {
  const agent = str(flags.agent);
  let sessionId = str(flags.session);
  if (!agent && !sessionId) throw new UsageError("chat needs --agent <name> (a new session) or --session <id> (resume one)");
  const busy = busyOptions(flags);
  const renderer = new ChatRenderer(fmt);
  const out = (text: string) => text && io.stdout(text);
  // While a question waits, the cursor is after its prompt: a message goes on the next line.
  let promptOpen = false;
  const note = (text: string) => {
    io.stdout(`${promptOpen ? "\n" : renderer.lineStart()}${text}\n`);
    promptOpen = false;
  };
  const askLine = async (prompt: string, signal: AbortSignal): Promise<string | null> => {
    promptOpen = true;
    // The IO ends the line of an aborted question. (An event listener returns nothing.)
    const closed = () => {
      promptOpen = false;
    };
    signal.addEventListener("abort", closed, { once: true });
    try {
      return await io.question(prompt, signal);
    } finally {
      signal.removeEventListener("abort", closed);
      promptOpen = false;
    }
  };

  // Ctrl-C: during a turn the first interrupts it and the second exits; at the prompt, two in a row exit.
  const exit = new AbortController();
  let turn: { abort: AbortController; interrupted: boolean } | null = null;
  let armed = false;
  const off = io.onInterrupt(() => {
    if (turn && !turn.interrupted) {
      turn.interrupted = true;
      turn.abort.abort();
      note("^C interrupting the turn… (Ctrl-C again to exit)");
      client.interrupt(sessionId!, "interrupted from the command line").catch((err) => io.stderr(`${errorLine(err)}\n`));
    } else if (turn || armed) {
      exit.abort();
    } else {
      armed = true;
      const reprompt = promptOpen;
      note("^C (Ctrl-C again or Ctrl-D to exit)");
      if (reprompt && io.redrawPrompt) {
        promptOpen = true;
        io.redrawPrompt();
      }
    }
  });

  const ask = async (toolName: string, args: unknown, depth: number, signal: AbortSignal): Promise<"approve" | "reject" | null> => {
    out(renderer.lineStart());
    for (;;) {
      const answer = await askLine(approvalPrompt(toolName, args, depth, fmt), signal);
      if (answer === null) return null;
      const decision = parseApproval(answer);
      if (decision) return decision;
    }
  };

  /**
   * An ask_user question: asked until a line reads as an answer the server takes (a 422 says why and asks
   * again); an empty line declines it. Answered here, so the client has nothing to send (null).
   */
  const answer = async (e: Extract<RuntimeEvent, { type: "action.required" }>, signal: AbortSignal): Promise<null> => {
    out(renderer.lineStart());
    const schema = e.payload.response_schema;
    for (;;) {
      const line = await askLine(questionPrompt(e.payload.question ?? "", schema, e.depth ?? 0), signal);
      if (line === null) return null;
      const parsed = parseAnswer(line, schema);
      if (!parsed) continue;
      const body = "decline" in parsed ? { decision: "reject" as const, reason: "declined at the command line" } : { response: parsed.response };
      try {
        await client.respondAction(sessionId!, e.action_id!, body);
        return null;
      } catch (err) {
        if (err instanceof RuntimeError && err.status === 409) return null; // decided already; the log says how
        if (!(err instanceof RuntimeError && err.status === 422)) throw err;
        note(errorLine(err));
      }
    }
  };

  // A blip (the socket closed, the next connection works) is silent; failing reconnections are shown.
  let reconnecting = false;
  const onStatus = (s: StreamStatus) => {
    if (s.type === "retry" && s.error) {
      reconnecting = true;
      const reason = s.error instanceof RuntimeError && s.error.status === 0 ? s.error.message.replace(/^.* failed: /, "") : s.error.message;
      note(`… connection lost (${reason}); reconnecting in ${(s.delayMs / 1000).toFixed(1)} s`);
    } else if (s.type === "open" && reconnecting) {
      reconnecting = false;
      note(`… reconnected, resuming after event ${s.after}`);
    }
  };

  /** Runs one turn's wait; prints its failure, if the wait itself fails. Resolves false when the user asked to exit. */
  const follow = async (wait: (signal: AbortSignal, onApproval: (e: RuntimeEvent) => Promise<"approve" | "reject" | null>) => Promise<TerminalEvent>) => {
    const current = { abort: new AbortController(), interrupted: false };
    turn = current;
    const onApproval = async (e: RuntimeEvent) => {
      const signal = anySignal(current.abort.signal, exit.signal);
      if (e.type === "action.required" && e.payload.kind === "user_input") return answer(e, signal);
      const [name, args] = e.type === "action.required" ? [e.payload.tool_name, e.payload.args] : ["tool", undefined];
      return ask(name, args, e.depth ?? 0, signal);
    };
    try {
      await wait(exit.signal, onApproval);
    } catch (err) {
      if (exit.signal.aborted) return false;
      io.stderr(`${renderer.lineStart()}${errorLine(err)}\n`);
    } finally {
      turn = null;
    }
    out(renderer.lineStart());
    return !exit.signal.aborted;
  };

  try {
    if (sessionId) {
      const snap = await client.getSession(sessionId);
      note(`session ${sessionId} (agent ${snap.agent.name}, ${snap.turn_count} turn${snap.turn_count === 1 ? "" : "s"} so far)`);
      const thread = await client.getThread(sessionId);
      if (thread.active_turn_id) {
        const turnId = thread.active_turn_id;
        note(`attaching to the running turn ${turnId}`);
        const ok = await follow(async (signal, onApproval) => {
          // Decisions already pending (their action.required is before the cursor) are asked first.
          for (const a of thread.pending_actions) {
            // The approval as its action.required said it (the read model keeps what the prompt needs).
            const payload = {
              kind: a.kind === "user_input" ? ("user_input" as const) : ("tool_approval" as const),
              tool_name: a.tool_name ?? "tool",
              args: a.args,
              injected_args: {},
              expires_at: a.expires_at ?? 0,
              ...(a.question === undefined ? {} : { question: a.question, response_schema: a.response_schema }),
            };
            const decision = await onApproval({ type: "action.required", action_id: a.action_id, payload, depth: 0 } as RuntimeEvent);
            if (decision) await client.respondAction(sessionId!, a.action_id, decision).catch(() => undefined);
          }
          return client.waitForTurn(sessionId!, turnId, {
            after: thread.last_sequence,
            signal,
            onApproval,
            onStatus,
            onEvent: (e) => void out(renderer.render(e)),
          });
        });
        if (!ok) return EXIT.interrupted;
      }
    } else {
      const created = await client.createSession({ agent: agent! });
      sessionId = created.session_id;
      note(`session ${sessionId} (agent ${agent}); resume it with --session ${sessionId}`);
    }
    const sid = sessionId;

    for (;;) {
      const line = await askLine("> ", exit.signal);
      if (line === null) {
        if (exit.signal.aborted) return EXIT.interrupted;
        out("\n"); // Ctrl-D: leave the prompt's line
        return EXIT.ok;
      }
      armed = false;
      const input = line.trim();
      if (!input) continue;
      if (input === "/exit" || input === "/quit") return EXIT.ok;
      if (input === "/session") {
        note(sid);
        continue;
      }
      if (input === "/help") {
        note("type a message and Enter to run a turn; /session prints the session id; /exit (or Ctrl-D) leaves");
        continue;
      }
      const ok = await follow((signal, onApproval) =>
        client.submitAndWait(sid, input, { ...busy, signal, onApproval, onStatus, onEvent: (e) => void out(renderer.render(e)) }),
      );
      if (!ok) return EXIT.interrupted;
    }
  } finally {
    off();
    out(promptOpen ? "\n" : renderer.lineStart()); // leaving mid-line (a question, streamed text): end the line
    exit.abort();
  }
}
