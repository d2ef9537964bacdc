-- The last version number of each deleted agent whose versions were erased (its sessions were all erased):
-- an agent created again under the name goes on numbering from it, so a number never names two configs.
CREATE TABLE erased_agent_versions (
  name TEXT PRIMARY KEY,
  last_version INTEGER NOT NULL
);
