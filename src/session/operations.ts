// The session's operations, typed from their declarations (src/protocol/operations/, those with `session: true`):
// one name per operation, its operationId. A handler's input is its declaration's path parameters, query and body
// as the route validated them; its result is the declared success response (or that response as JSON text the
// session wrote), except for a `custom` route, which does more than send it: its handler's result is its own.
// The table of handlers (operationTable) must serve every declared operation once, or it does not type-check.
import type { z } from "zod";
import type { ResponsesRequestRecord } from "../protocol/event-shapes";
import type { TurnTrace } from "../protocol/events";
import type * as declared from "../protocol/operations";
import type { AnswerOf } from "../protocol/operations";

type Areas = typeof declared.sessions &
  typeof declared.agentVersions &
  typeof declared.turns &
  typeof declared.streams &
  typeof declared.schedules &
  typeof declared.subscriptions &
  typeof declared.chat;
type SessionOps = { [K in keyof Areas as Areas[K] extends { session: true } ? K : never]: Areas[K] };

/** The name of a session operation: its operationId (each declaration is exported under it). */
export type OpName = keyof SessionOps;
type Assert<T extends true> = T;
/** Type-checks only when every session operation is exported under its operationId. */
export type NamesAreIds = Assert<{ [K in OpName]: SessionOps[K]["operationId"] extends K ? true : false }[OpName]>;

/** Who calls, beside what the declaration validates. */
export interface Caller {
  /** Who calls (a hash of the API key, or a token's id), recorded on decisions. */
  by: string;
  /** The caller's trace (its W3C traceparent), which a turn it submits joins. */
  trace?: TurnTrace;
  /** The surface a turn comes from when its defaults differ: "chat" takes the agent's chat_on_busy. */
  via?: "chat";
  /** A turn or decision of POST /v1/responses: the request's fields its response echoes, recorded with it. */
  responses?: ResponsesRequestRecord;
}

type ParamsOf<O> = O extends { params: infer P extends z.ZodType } ? z.output<P> : { sid: string };
type QueryOf<O> = O extends { query: infer Q extends z.ZodType } ? { query?: Partial<z.output<Q>> } : { query?: undefined };
type BodyOf<O> = O extends { body: { schema: infer B extends z.ZodType; required: infer R } }
  ? R extends true
    ? { body: z.output<B> }
    : { body?: z.output<B> }
  : { body?: undefined };

/** What the handler of operation `N` gets. */
export type OpInput<N extends OpName> = Caller & { params: ParamsOf<SessionOps[N]> } & QueryOf<SessionOps[N]> & BodyOf<SessionOps[N]>;

/** JSON text of a `T` that the session wrote (a page of stored events, say) and the route sends as it is. */
export type JsonText<T> = string & { readonly json: T };
export const jsonText = <T>(text: string): JsonText<T> => text as JsonText<T>;
export const parseJson = <T>(text: JsonText<T>): T => JSON.parse(text) as T;

/** The declared success body of operation `N`. */
export type ResponseBody<N extends OpName> = AnswerOf<SessionOps[N]>;
/** What the handler of a generic operation answers: the declared success body, or it as JSON text. */
export type DeclaredResult<N extends OpName> = ResponseBody<N> | JsonText<ResponseBody<N>>;

type Handler<N extends OpName, R> = (input: OpInput<N>) => R | Promise<R>;
/** Every session operation's handler: a generic operation's answers its declared response, a custom one's its own. */
export type Handlers = { [N in OpName]: Handler<N, SessionOps[N] extends { custom: true } ? unknown : DeclaredResult<N>> };

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** The handlers a list of capabilities serves, as one table. */
export type OperationsOf<C extends readonly unknown[]> = UnionToIntersection<
  C[number] extends infer E ? (E extends { operations: infer O } ? O : never) : never
>;
/** What operation `N` answers in a table `T` (the handler's own result type). */
export type ResultIn<T, N extends OpName> = N extends keyof T ? (T[N] extends (...args: never[]) => infer R ? Awaited<R> : never) : never;

/** The table of handlers by operation name; each served once, and (as types say) every one served. */
export function operationTable<const C extends readonly { operations?: Partial<Handlers>; alarms?: unknown; committed?: unknown }[]>(
  capabilities: C & NoInfer<OperationsOf<C> extends Handlers ? unknown : { missing: Exclude<OpName, keyof OperationsOf<C>> }>,
): OperationsOf<C> {
  const table: Record<string, unknown> = {};
  for (const c of capabilities) {
    for (const [name, handler] of Object.entries(c.operations ?? {})) {
      if (name in table) throw new Error(`session operation ${name} is served twice`);
      table[name] = handler;
    }
  }
  return table as OperationsOf<C>;
}
