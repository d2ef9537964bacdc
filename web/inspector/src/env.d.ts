// The client's types (src/client/types.ts) still import from server modules (src/runtime), which this
// project type-checks too. Those were written against workerd's typings, where clearTimeout takes null;
// browsers accept null as well (a no-op), the DOM typings are only narrower.
declare function clearTimeout(id: number | null | undefined): void;
