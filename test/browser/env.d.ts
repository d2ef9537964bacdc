// Type-checking Node-side tests also checks test/support/fake-model.ts (fake-openai.ts takes its Step type from
// it), whose `cloudflare:test` import exists only in workerd; the import is type-only, erased at run time.
declare module "cloudflare:test" {
  export const env: Record<string, unknown>;
}
