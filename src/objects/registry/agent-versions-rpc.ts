// The registry's reads and moves of versions, labels and traffic, as one RPC of the registry object
// (`versions(op, ...args)`), so the object itself only names them.
import type { TrafficRoute } from "../../protocol/agent-versions";
import { getTraffic, listLabels, moveLabel, setTraffic } from "./agent-labels";
import { getVersion, listVersions } from "./agent-versions";

export function versionsRpc(sql: SqlStorage) {
  return {
    list: (name: string) => listVersions(sql, name),
    get: (name: string, version: number) => getVersion(sql, name, version),
    labels: (name: string) => listLabels(sql, name),
    moveLabel: (name: string, label: string, version: number, by: string | null) => moveLabel(sql, name, label, version, by, Date.now()),
    traffic: (name: string) => getTraffic(sql, name),
    setTraffic: (name: string, routes: TrafficRoute[], by: string | null) => setTraffic(sql, name, routes, by, Date.now()),
    /** Whether the agent exists now (a deleted one's versions stay, each readable by number; its labels and traffic do not). */
    exists: (name: string) => sql.exec("SELECT 1 FROM agents WHERE name = ?", name).toArray().length > 0,
  };
}
export type AgentVersionsRpc = ReturnType<typeof versionsRpc>;

/** Each op as a typed call through the registry's stub (RPC typing loses a generic method's own types). */
export type VersionsClient = { [K in keyof AgentVersionsRpc]: (...args: Parameters<AgentVersionsRpc[K]>) => Promise<ReturnType<AgentVersionsRpc[K]>> };
const OPS: (keyof AgentVersionsRpc)[] = ["list", "get", "labels", "moveLabel", "traffic", "setTraffic", "exists"];

export function versionsOf(stub: { versions(op: keyof AgentVersionsRpc, args: unknown[]): Promise<unknown> }): VersionsClient {
  return Object.fromEntries(OPS.map((op) => [op, (...args: unknown[]) => stub.versions(op, args)])) as VersionsClient;
}
