// Guardrail checks of an agent config beyond its schema: what needs the deployment (a judge's provider, a
// webhook's URL on the allowlist) and what ties fields together (redacting the answer needs it buffered).
import type { AgentConfig } from "../../protocol/agent-config";
import type { FieldIssue } from "../../protocol/errors";
import { GUARDRAIL_STAGES } from "../../protocol/guardrails";
import { parseModelSpec } from "../../protocol/model-spec";
import type { DeploymentContext } from "../deployment-checks";
import { providerConfigured } from "../models";
import { urlAllowed } from "../url-allowlist";

export function guardrailIssues(config: AgentConfig, ctx: DeploymentContext): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const stage of GUARDRAIL_STAGES) {
    config.guardrails?.[stage]?.forEach((rule, i) => {
      const path = `guardrails.${stage}.${i}`;
      if (rule.type === "webhook" && !urlAllowed(rule.url, ctx.urlAllowlist))
        issues.push({ path: `${path}.url`, reason: "is not under any TOOL_URL_ALLOWLIST prefix" });
      const spec = rule.type === "model" ? parseModelSpec(rule.model) : null;
      if (spec && !providerConfigured(spec.provider, ctx.env))
        issues.push({ path: `${path}.model`, reason: `provider "${spec.provider}" is not configured in this deployment` });
      // Streamed text is in the log (model.delta) before the answer is checked: nothing could be redacted from it.
      if (stage === "output" && rule.action === "redact" && config.output_mode !== "buffered") {
        issues.push({ path: `${path}.action`, reason: 'redact on the output needs output_mode "buffered"' });
      }
    });
  }
  return issues;
}
