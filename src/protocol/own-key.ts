// Reading a record by a key that came from a client or a model: only the record's own entries count, so a key
// such as "constructor" or "__proto__" finds nothing instead of a member every object inherits.
export function own<T>(record: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}
