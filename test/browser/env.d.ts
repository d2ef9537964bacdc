// Type-checking this Node-side code also checks two modules written for workerd that it reaches:
// - fake-openai.ts takes its Step type from the workerd-side fake-model.ts, whose `cloudflare:test` import
//   exists only in workerd (erased here: the import is type-only);
// - the client's types still import server modules (src/runtime) written against workerd's typings, where
//   clearTimeout accepts null (Node's does too at run time; its typings are only narrower).
declare module "cloudflare:test" {
  export const env: Record<string, unknown>;
}
declare function clearTimeout(timeout: NodeJS.Timeout | string | number | null | undefined): void;
