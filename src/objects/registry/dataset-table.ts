// Datasets, a table of the registry object: every version of each dataset's items. A PUT whose items hash
// like the newest version's stores nothing new.
import type { DatasetItem, DatasetSummary, DatasetVersion } from "../../protocol/datasets";

interface Row {
  name: string;
  version: number;
  content_hash: string;
  items: string;
  item_count: number;
  created_at: number;
  created_by: string | null;
  [key: string]: SqlStorageValue;
}

const summary = ({ items: _, ...r }: Row): DatasetSummary => r;

export class DatasetTable {
  constructor(private readonly sql: SqlStorage) {}

  /** Stores `items` as a new version unless the newest has the same hash; `created` tells whether it did. */
  put(name: string, items: DatasetItem[], hash: string, by: string | null, now: number): { created: boolean; dataset: DatasetSummary } {
    const latest = this.row(name);
    if (latest && latest.content_hash === hash) return { created: false, dataset: summary(latest) };
    const version = (latest?.version ?? 0) + 1;
    this.sql.exec(
      "INSERT INTO dataset_versions (name, version, content_hash, items, item_count, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
      name,
      version,
      hash,
      JSON.stringify(items),
      items.length,
      now,
      by,
    );
    return { created: true, dataset: summary(this.row(name, version)!) };
  }

  /** A version with its items (the newest when none is named). */
  get(name: string, version?: number): DatasetVersion | null {
    const row = this.row(name, version);
    return row ? { ...summary(row), items: JSON.parse(row.items) as DatasetItem[] } : null;
  }

  /** Each dataset's newest version. */
  list(): DatasetSummary[] {
    return this.sql
      .exec<Row>("SELECT d.* FROM dataset_versions d WHERE version = (SELECT max(version) FROM dataset_versions WHERE name = d.name) ORDER BY name")
      .toArray()
      .map(summary);
  }

  remove(name: string): boolean {
    return this.sql.exec("DELETE FROM dataset_versions WHERE name = ?", name).rowsWritten > 0;
  }

  private row(name: string, version?: number): Row | null {
    const q =
      version === undefined
        ? this.sql.exec<Row>("SELECT * FROM dataset_versions WHERE name = ? ORDER BY version DESC LIMIT 1", name)
        : this.sql.exec<Row>("SELECT * FROM dataset_versions WHERE name = ? AND version = ?", name, version);
    return q.toArray()[0] ?? null;
  }
}
