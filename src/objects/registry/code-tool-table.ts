// The registry's code tools (docs/guides/code-tools.md): every version of each. A PUT that changes nothing
// keeps the latest version; any change (source, schema, limits, hosts, a secret's value) adds one.
import { type CodeToolInput, type CodeToolVersion, sha256Hex as sha256 } from "../../protocol/code-tools";

type Row = { definition: string };

/** The definition as it is compared and hashed: fixed key order, the secrets sorted by name. */
function canonical(input: Omit<CodeToolInput, "secrets">, secrets: Record<string, string>) {
  const sorted = Object.fromEntries(Object.entries(secrets).sort(([a], [b]) => (a < b ? -1 : 1)));
  const { description, input_schema, source, timeout_ms, cpu_ms, allowed_hosts } = input;
  return { description, input_schema, source, timeout_ms, cpu_ms, allowed_hosts, secrets: sorted };
}

export class CodeToolTable {
  constructor(private readonly sql: SqlStorage) {}

  latest(name: string): CodeToolVersion | null {
    const row = this.sql.exec<Row>("SELECT definition FROM code_tools WHERE name = ? ORDER BY version DESC LIMIT 1", name).toArray()[0];
    return row ? (JSON.parse(row.definition) as CodeToolVersion) : null;
  }

  version(name: string, version: number): CodeToolVersion | null {
    const row = this.sql.exec<Row>("SELECT definition FROM code_tools WHERE name = ? AND version = ?", name, version).toArray()[0];
    return row ? (JSON.parse(row.definition) as CodeToolVersion) : null;
  }

  /** The latest version of each tool, by name. */
  list(): CodeToolVersion[] {
    return this.sql
      .exec<Row>(`SELECT definition FROM code_tools c WHERE version = (SELECT max(version) FROM code_tools WHERE name = c.name) ORDER BY name`)
      .toArray()
      .map((r) => JSON.parse(r.definition) as CodeToolVersion);
  }

  /** Stores `input` as the next version unless it equals the latest; secrets absent keep the latest's. */
  async put(name: string, input: CodeToolInput): Promise<{ created: boolean; tool: CodeToolVersion }> {
    const before = this.latest(name);
    const { secrets: given, ...rest } = input;
    const definition = canonical(rest, given ?? before?.secrets ?? {});
    if (before && JSON.stringify(canonical(before, before.secrets)) === JSON.stringify(definition)) return { created: false, tool: before };
    const tool: CodeToolVersion = {
      name,
      version: (before?.version ?? 0) + 1,
      ...definition,
      hash: await sha256(JSON.stringify({ ...definition, secrets: Object.keys(definition.secrets) })),
      source_hash: await sha256(definition.source),
      created_at: Date.now(),
    };
    this.sql.exec(
      "INSERT INTO code_tools (name, version, definition, hash, source_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      name,
      tool.version,
      JSON.stringify(tool),
      tool.hash,
      tool.source_hash,
      tool.created_at,
    );
    return { created: before === null, tool };
  }

  /** Removes every version; false when there was none. */
  remove(name: string): boolean {
    return this.sql.exec("DELETE FROM code_tools WHERE name = ?", name).rowsWritten > 0;
  }
}
