#!/usr/bin/env node
// `npm run tenant:new -- <name> [--config wrangler.toml]`: adds the tenant's environment to wrangler.toml
// (its own Durable Object namespaces and migrations, R2 bucket, variables, among them a DEPLOYMENT_ID of its
// own that its browser tokens are bound to), derived from the top-level configuration so every binding the
// runtime needs is there, and prints what to run next, with a fresh admin key and token signing secret.
import { randomBytes } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { parse, stringify } from "smol-toml";

const TENANT = /^[a-z][a-z0-9-]{0,30}[a-z0-9]$/;

function fail(message) {
  process.stderr.write(`tenant:new: ${message}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const configAt = args.indexOf("--config");
const configPath = configAt >= 0 ? args[configAt + 1] : "wrangler.toml";
const name = args.find((a, i) => !a.startsWith("--") && (configAt < 0 || i !== configAt + 1));
if (!name) fail("usage: npm run tenant:new -- <name> [--config wrangler.toml]");
if (!TENANT.test(name)) fail(`"${name}" is not a tenant name: 2-32 characters of a-z, 0-9 and -, starting with a letter`);
if (!configPath) fail("--config needs a path");

const text = readFileSync(configPath, "utf8");
const top = parse(text);
if (top.env?.[name]) fail(`${configPath} already has [env.${name}]`);

const worker = `${top.name}-${name}`;
const bucket = `${worker}-blobs`;
const env = {
  name: worker,
  durable_objects: { bindings: top.durable_objects?.bindings ?? [] },
  migrations: top.migrations ?? [],
  r2_buckets: (top.r2_buckets ?? []).map((b) => ({ ...b, bucket_name: bucket })),
  // The audience of the tenant's tokens: unique, so no other deployment accepts them even with the same secret.
  vars: { DEPLOYMENT_ID: `${name}-${randomBytes(8).toString("hex")}`, TOOL_URL_ALLOWLIST: "", CORS_ORIGINS: "" },
};
appendFileSync(configPath, `\n# Tenant "${name}", added by npm run tenant:new.\n${stringify({ env: { [name]: env } })}\n`);

const key = `rk_${randomBytes(32).toString("base64url")}`;
const signingSecret = randomBytes(32).toString("base64url");
const steps = [
  "Sign in once: npx wrangler login (or export CLOUDFLARE_API_TOKEN=<a token with Workers and R2 edit rights>)",
  `npx wrangler r2 bucket create ${bucket}`,
  `echo '${key}' | npx wrangler secret put API_KEYS --env ${name}   # a new admin key; keep it somewhere safe`,
  `echo '${signingSecret}' | npx wrangler secret put TOKEN_SIGNING_SECRET --env ${name}   # signs the tenant's browser tokens; this tenant's own`,
  `npx wrangler secret put OPENAI_API_KEY --env ${name}   # and/or ANTHROPIC_API_KEY, OPENAI_COMPATIBLE_API_KEY`,
  `edit [env.${name}.vars] in ${configPath}: TOOL_URL_ALLOWLIST (URL prefixes tools may call), CORS_ORIGINS`,
  `npm run deploy -- --env ${name}`,
];
process.stdout.write(
  `Added [env.${name}] (worker ${worker}, bucket ${bucket}) to ${configPath}.\nNext:\n${steps.map((s, i) => `  ${i + 1}. ${s}`).join("\n")}\n`,
);
