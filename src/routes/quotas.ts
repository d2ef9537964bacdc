// Quota routes (docs/guides/quotas.md): definitions in the registry, usage from the subject's quota object.

import type { Env } from "../env";
import { quotaObject } from "../objects/quota/quota-object";
import { forgetQuotas, quotaDefinitions } from "../objects/registry/quota-cache";
import { registry } from "../objects/registry/registry-object";
import { ApiError } from "../protocol/errors";
import { quotas as ops } from "../protocol/operations";
import type { QuotaDefinition, QuotaView } from "../protocol/quotas";
import { configuredKeyIds } from "./auth";
import { router } from "./http";
import { route } from "./operation-route";

/** The name of the object that counts `kind`'s `subject` (the deployment's: no subject). */
export const quotaSubjectName = (kind: string, subject: string): string => `${kind}:${subject}`;

async function withUsage(env: Env, quota: QuotaDefinition, asked: string | undefined): Promise<QuotaView> {
  const { scope } = quota;
  if (scope.id !== undefined && asked !== undefined && asked !== scope.id) {
    throw ApiError.validation([{ path: "subject", reason: `the quota's scope names ${scope.kind} '${scope.id}'; leave subject out or name that one` }]);
  }
  if (scope.kind === "deployment" && asked !== undefined) throw ApiError.validation([{ path: "subject", reason: "a deployment quota has no subjects" }]);
  const subject = scope.kind === "deployment" ? "" : (scope.id ?? asked);
  if (subject === undefined) return quota;
  const usage = await quotaObject(env, quotaSubjectName(scope.kind, subject)).usage([quota], subject);
  return { ...quota, usage };
}

export const quotas = router()
  .openapi(route(ops.putQuota), async (c) => {
    const { id } = c.req.valid("param");
    const spec = c.req.valid("json");
    if (spec.scope.kind === "key" && spec.scope.id !== undefined && !(await configuredKeyIds(c.env)).includes(spec.scope.id)) {
      throw ApiError.validation([{ path: "scope.id", reason: `no API key of this deployment has the id '${spec.scope.id}'` }]);
    }
    const { created, quota } = await registry(c.env).putQuota(id, spec);
    forgetQuotas();
    return c.json(quota, created ? 201 : 200);
  })
  .openapi(route(ops.listQuotas), async (c) => {
    forgetQuotas(); // a read of the definitions themselves is never stale
    return c.json({ quotas: await quotaDefinitions(c.env) }, 200);
  })
  .openapi(route(ops.getQuota), async (c) => {
    const { id } = c.req.valid("param");
    const quota = (await registry(c.env).quotas()).find((q) => q.id === id);
    if (!quota) throw ApiError.notFound("Quota", id);
    return c.json(await withUsage(c.env, quota, c.req.valid("query").subject), 200);
  })
  .openapi(route(ops.deleteQuota), async (c) => {
    const { id } = c.req.valid("param");
    if (!(await registry(c.env).removeQuota(id))) throw ApiError.notFound("Quota", id);
    forgetQuotas();
    return c.json({ deleted: true as const, id }, 200);
  });
