// The session's operations as their declarations type them (src/protocol/operations/, those with `session: true`):
// one name per operation, its operationId; what a caller gives one (its path parameters, query and body as the
// route validated them, and who calls) and the success body it declares, which the session may answer as JSON
// text it wrote. The session's handlers (src/session/operations.ts) and every caller of its object use these.
import type { z } from "zod";
import type { ResponsesRequestRecord } from "./event-shapes";
import type { TurnTrace } from "./events";
import type * as declared from "./operations";
import type { AnswerOf } from "./operations";
import type { Answer } from "./operations/operation";

type Areas = typeof declared.sessions &
  typeof declared.agentVersions &
  typeof declared.turns &
  typeof declared.streams &
  typeof declared.schedules &
  typeof declared.subscriptions &
  typeof declared.chat;
export type SessionOps = { [K in keyof Areas as Areas[K] extends { session: true } ? K : never]: Areas[K] };

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
/** What operation `N`'s session handler answers: the declared success body, or for a `custom` route what it declares it `answers`. */
export type HandlerResult<N extends OpName> = SessionOps[N] extends { answers: Answer<infer T> }
  ? T
  : SessionOps[N] extends { custom: true }
    ? never
    : DeclaredResult<N>;
