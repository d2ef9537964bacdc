// A WHERE clause built from optional filters, each a clause with its `?` values, for the objects' list queries.

export interface Where {
  /** Adds a clause (joined with AND) and the values of its placeholders, in order. */
  add(clause: string, ...values: SqlStorageValue[]): void;
  /** `WHERE a AND b`, or "" when nothing was added. */
  sql(): string;
  /** The placeholders' values, in the clauses' order. */
  readonly args: SqlStorageValue[];
}

export function where(...initial: [clause: string, ...values: SqlStorageValue[]][]): Where {
  const clauses: string[] = [];
  const args: SqlStorageValue[] = [];
  const w: Where = {
    add(clause, ...values) {
      clauses.push(clause);
      args.push(...values);
    },
    sql: () => (clauses.length ? `WHERE ${clauses.join(" AND ")}` : ""),
    args,
  };
  for (const [clause, ...values] of initial) w.add(clause, ...values);
  return w;
}
