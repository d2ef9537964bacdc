// What eval runs and datasets read of a session through its object's RPCs: its events (a recorded turn, a
// case's turn), and a turn's outcome when it ends.
import type { Env } from "../../env";
import { ApiError, type Result, unwrap } from "../../protocol/errors";
import type { RuntimeEvent } from "../../protocol/events";
import type { InputPart } from "../../protocol/input-parts";
import type { ReplaySource } from "../../protocol/operations/turns";
import type { HandlerResult, JsonText, OpInput, OpName } from "../../protocol/session-operations";

const PAGE = 1000;

/** The session object's operation dispatch, typed by the declarations (its RPC typing drops the generic). */
type Calls = { call<N extends OpName>(name: N, input: OpInput<N>): Promise<Result<HandlerResult<N>>> };

export function sessionObject(env: Pick<Env, "SESSIONS">, sid: string) {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sid));
}

const calls = (env: Pick<Env, "SESSIONS">, sid: string) => sessionObject(env, sid) as unknown as Calls;

/** Runs operation `name` of session `sid`: what its handler answers (parsed when the session wrote it as JSON text). */
async function callOp<N extends OpName>(env: Pick<Env, "SESSIONS">, sid: string, name: N, input: OpInput<N>): Promise<Parsed<HandlerResult<N>>> {
  const answer = unwrap(await calls(env, sid).call(name, input));
  return (typeof answer === "string" ? JSON.parse(answer) : answer) as Parsed<HandlerResult<N>>;
}

/** An answer the session wrote as JSON text, as its body. */
type Parsed<R> = R extends JsonText<infer T> ? T : R;

/** Every event of the session (of the root level and its sub-agents), in order; 404 when the session does not exist. */
export async function sessionEvents(env: Pick<Env, "SESSIONS">, sid: string, keep: (e: RuntimeEvent) => boolean = () => true): Promise<RuntimeEvent[]> {
  const out: RuntimeEvent[] = [];
  for (let after = 0; ; ) {
    const page = await callOp(env, sid, "getEvents", { params: { sid }, query: { after, limit: PAGE }, by: "evals" });
    out.push(...page.events.filter(keep));
    if (!page.has_more || page.events.length === 0) return out;
    after = page.next_after;
  }
}

/** Every event of turn `turnId`, in order; 404 when the session does not exist. */
export function turnEvents(env: Pick<Env, "SESSIONS">, sid: string, turnId: string): Promise<RuntimeEvent[]> {
  return sessionEvents(env, sid, (e) => e.turn_id === turnId);
}

/** Submits `input` to the session under `key` (the same turn when submitted again) and answers its id. */
export async function submitOnce(env: Pick<Env, "SESSIONS">, sid: string, input: string | InputPart[], key: string, by: string): Promise<string> {
  return (await callOp(env, sid, "submitTurn", { params: { sid }, body: { input, idempotency_key: key }, by })).turn_id;
}

/** Waits for the turn's end. */
export async function followTurn(env: Pick<Env, "SESSIONS">, sid: string, turnId: string): Promise<void> {
  unwrap(await sessionObject(env, sid).followTurn(turnId));
}

/** A recorded turn's input text and answer, for a dataset item; 422 issues at `path` when there is none. */
export async function recordedTurn(env: Pick<Env, "SESSIONS">, sid: string, turnId: string, path: string): Promise<{ input: string; output: unknown }> {
  const noSession = ApiError.validation([{ path: `${path}.session_id`, reason: `no session '${sid}'` }]);
  if (!/^ses_[0-9a-f]{24}$/.test(sid)) throw noSession;
  let events: RuntimeEvent[];
  try {
    events = await turnEvents(env, sid, turnId);
  } catch (err) {
    if (err instanceof ApiError && err.code === "not_found") throw noSession;
    throw err;
  }
  const submitted = events.find((e) => e.type === "turn.submitted");
  if (!submitted) throw ApiError.validation([{ path: `${path}.turn_id`, reason: `session '${sid}' has no turn '${turnId}'` }]);
  const end = events.find((e) => e.type === "turn.completed");
  if (!end) throw ApiError.validation([{ path: `${path}.turn_id`, reason: `turn '${turnId}' has not completed (no answer to expect)` }]);
  return { input: (submitted.payload as { input: string }).input, output: (end.payload as { output: unknown }).output };
}

/** Interrupts the session's running turn (a cancelled run's case); nothing when it is idle. */
export async function interruptTurn(env: Pick<Env, "SESSIONS">, sid: string, reason: string, by: string): Promise<void> {
  await callOp(env, sid, "interrupt", { params: { sid }, body: { reason }, by });
}

/** What a replay of the recorded turn starts from (the source's replayTurn operation). */
export async function replaySourceOf(env: Pick<Env, "SESSIONS">, sid: string, turnId: string, by: string): Promise<ReplaySource> {
  return callOp(env, sid, "replayTurn", { params: { sid, turn_id: turnId }, by });
}
