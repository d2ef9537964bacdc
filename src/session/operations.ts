// The session's handlers, typed from its operations' declarations (src/protocol/session-operations.ts): a
// handler's result is the declared success response (or that response as JSON text the session wrote), except
// for a `custom` route, which does more than send it: its handler's result is its own. The table of handlers
// (operationTable) must serve every declared operation once, or it does not type-check.
import type { HandlerResult, OpInput, OpName } from "../protocol/session-operations";

type Handler<N extends OpName, R> = (input: OpInput<N>) => R | Promise<R>;
/** Every session operation's handler: a generic operation's answers its declared response, a custom one's its own. */
export type Handlers = { [N in OpName]: Handler<N, HandlerResult<N>> };

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
