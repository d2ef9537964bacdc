// The deployment's quota definitions, a table of the registry object (its one writer). Request paths and
// sessions read them through quota-cache.ts; the counts live in the quota objects (src/objects/quota/).
import type { QuotaDefinition, QuotaSpec } from "../../protocol/quotas";

type Row = { id: string; spec: string; created_at: number; updated_at: number };

const definition = (r: Row): QuotaDefinition => ({ ...(JSON.parse(r.spec) as QuotaSpec), id: r.id, created_at: r.created_at, updated_at: r.updated_at });

export class QuotaTable {
  constructor(private readonly sql: SqlStorage) {}

  /** Stores a validated spec under `id`; `created` tells whether the id was new. */
  put(id: string, spec: QuotaSpec, now: number): { created: boolean; quota: QuotaDefinition } {
    const before = this.get(id);
    this.sql.exec(
      `INSERT INTO quotas (id, spec, created_at, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at`,
      id,
      JSON.stringify(spec),
      now,
      now,
    );
    return { created: before === null, quota: { ...spec, id, created_at: before?.created_at ?? now, updated_at: now } };
  }

  get(id: string): QuotaDefinition | null {
    const row = this.sql.exec<Row>("SELECT * FROM quotas WHERE id = ?", id).toArray()[0];
    return row ? definition(row) : null;
  }

  list(): QuotaDefinition[] {
    return this.sql.exec<Row>("SELECT * FROM quotas ORDER BY id").toArray().map(definition);
  }

  remove(id: string): boolean {
    return this.sql.exec("DELETE FROM quotas WHERE id = ?", id).rowsWritten > 0;
  }
}
