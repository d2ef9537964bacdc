// Whom a turn's quotas count (docs/guides/quotas.md): the deployment; the API key that submitted the turn (a
// token's minting key); the end user (the session's owner, else the submitting token's subject); the session's
// resource; the session's agent. The quotas that apply are grouped by the object that counts each subject.
import type { QuotaDefinition, QuotaRule, QuotaScopeKind } from "../../protocol/quotas";
import type { LogHost, SettingsHost, SqlHost } from "../hosts";

export type QuotaSession = LogHost & SettingsHost & SqlHost;

/** One quota object and the rules it checks for the turn. */
export interface QuotaGroup {
  /** The object's name: `<kind>:<subject>`. */
  name: string;
  subject: string;
  rules: QuotaRule[];
}

const TOKEN = /^tok_([\s\S]*)@(key_[0-9a-f]{16})$/;

/** Who submitted turn `turnId` (a key's id, `tok_<subject>@<key>`, or null). */
export function submittedBy(s: Pick<QuotaSession, "store">, turnId: string): string | null {
  const submitted = s.store.eventsOfTurn(turnId).find((e) => e.type === "turn.submitted");
  return submitted?.type === "turn.submitted" ? (submitted.payload.by ?? null) : null;
}

/** The subject of each scope kind for turn `turnId` (null: the turn has none of that kind); `by` its submitter. */
export function turnSubjects(s: QuotaSession, turnId: string, by = submittedBy(s, turnId)): Record<QuotaScopeKind, string | null> {
  const token = by === null ? null : TOKEN.exec(by);
  const row = s.row();
  return {
    deployment: "",
    key: token ? token[2]! : by?.startsWith("key_") ? by : null,
    subject: row.owner ?? token?.[1] ?? null,
    resource: row.resource_id,
    agent: s.agent().name,
  };
}

/** The quotas of `definitions` that apply to a turn of `subjects`, by the object that counts them. */
export function quotaGroups(subjects: Record<QuotaScopeKind, string | null>, definitions: QuotaDefinition[]): QuotaGroup[] {
  const groups = new Map<string, QuotaGroup>();
  for (const q of definitions) {
    const subject = subjects[q.scope.kind];
    if (subject === null || (q.scope.id !== undefined && q.scope.id !== subject)) continue;
    const name = `${q.scope.kind}:${subject}`;
    const group = groups.get(name) ?? { name, subject, rules: [] };
    group.rules.push({ id: q.id, limits: q.limits, window: q.window, action: q.action, ...(q.warn_at ? { warn_at: q.warn_at } : {}) });
    groups.set(name, group);
  }
  return [...groups.values()];
}
