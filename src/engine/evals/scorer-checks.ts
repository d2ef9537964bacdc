// Scorers a deployment cannot run, named by field: a judge whose provider is not configured, a webhook off the
// URL allowlist. An eval run (POST /v1/evals) and an agent's online_scorers are refused with these.
import type { FieldIssue } from "../../protocol/errors";
import type { ScorerConfig } from "../../protocol/evals";
import { parseModelSpec } from "../../protocol/model-spec";
import { type ProviderEnv, providerConfigured } from "../models";
import { urlAllowed } from "../url-allowlist";

/** `path(i)` is the field of scorer i (`scorers.0`, `online_scorers.0.scorer`). */
export function scorerIssues(scorers: readonly ScorerConfig[], path: (i: number) => string, env: ProviderEnv, allowlist: string[]): FieldIssue[] {
  return scorers.flatMap((s, i): FieldIssue[] => {
    if (s.type === "model") {
      const spec = parseModelSpec(s.model);
      if (!spec) return [{ path: `${path(i)}.model`, reason: `"${s.model}" is not a model string (provider:model)` }];
      if (!providerConfigured(spec.provider, env))
        return [{ path: `${path(i)}.model`, reason: `the provider "${spec.provider}" is not configured in this deployment` }];
    }
    if (s.type === "webhook" && !urlAllowed(s.url, allowlist)) return [{ path: `${path(i)}.url`, reason: "is not under TOOL_URL_ALLOWLIST" }];
    return [];
  });
}
