// The event catalog as a client sees it: JSON Schema at GET /v1/events/schema (no key), and /openapi.json with
// typed events and read models and an operationId on every operation.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/protocol/events";

const get = async (path: string) => (await SELF.fetch(`https://runtime.test${path}`)).json() as Promise<any>;

describe("event catalog", () => {
  it("is served as JSON Schema without a key, one definition per event type", async () => {
    const res = await SELF.fetch("https://runtime.test/v1/events/schema");
    expect(res.status).toBe(200);
    const schema = (await res.json()) as any;
    expect(schema.$ref).toBe("#/$defs/RuntimeEvent");
    expect(schema.$defs.RuntimeEvent.oneOf).toHaveLength(EVENT_TYPES.length);
    expect(EVENT_TYPES).not.toContain("tool.progress");
    const result = schema.$defs["Event_tool.result"];
    expect(result.properties.type.const).toBe("tool.result");
    expect(result.properties.payload.required).toEqual(["name", "output", "is_error", "metadata"]);
  });

  it("types /openapi.json: events, snapshot, thread, tree and tools, and every operation has an operationId", async () => {
    const doc = await get("/openapi.json");
    const ids: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.operationId, `${method.toUpperCase()} ${path}`).toEqual(expect.any(String));
        ids.push(op.operationId);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    const content = (path: string, method = "get") => doc.paths[path][method].responses["200"].content["application/json"].schema;
    expect(JSON.stringify(content("/v1/sessions/{sid}/events"))).toContain("RuntimeEvent");
    expect(content("/v1/sessions/{sid}").$ref).toBe("#/components/schemas/SessionSnapshot");
    expect(content("/v1/sessions/{sid}/thread").$ref).toBe("#/components/schemas/Thread");
    expect(content("/v1/sessions/{sid}/tools").$ref).toBe("#/components/schemas/ToolInventory");
    expect(JSON.stringify(content("/v1/sessions/{sid}/turns/{turn_id}/tree"))).toContain("TreeNode");
    expect(doc.components.schemas["Event_model.delta"].properties.payload.properties.text.type).toBe("string");
  });
});
