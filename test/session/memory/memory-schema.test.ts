// Working memory against its agent's schema on every write path (docs/guides/memory.md): a stored document that
// no longer validates (written without the agent, or the schema changed since) does not block updates of its
// other keys, by the update_working_memory tool or over HTTP; a write that changes the invalid key is still held
// to the schema, naming the field.
import { describe, expect, it } from "vitest";
import { api, createAgent, submitTurn, waitForTurnEnd } from "../../support/api";
import { script, uniqueId } from "../../support/fake-model";

const schemaOf = (units: string[]) => ({
  type: "object",
  properties: { units: { enum: units }, name: { type: "string" } },
  additionalProperties: false,
});

async function agentWith(name: string, model: string, units: string[]): Promise<void> {
  await createAgent({ name, model, tools: ["update_working_memory"], memory: { working: { schema: schemaOf(units) } } });
}

/** A turn in a new session of `agent` for `rid`: its tool results and memory.updated events. */
async function turn(agent: string, rid: string, input: string) {
  const res = await api("POST", "/v1/sessions", { agent, resource_id: rid });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const sid = res.body.session_id;
  const log = await waitForTurnEnd(sid, (await submitTurn(sid, input)).turn_id);
  return { results: log.filter((e) => e.type === "tool.result").map((e) => e.payload), updated: log.filter((e) => e.type === "memory.updated") };
}

describe("a stored document that no longer validates", () => {
  it("written without the agent's schema (kelvin against an enum): the agent's tool still updates its other keys", async () => {
    const s = uniqueId("wm-stale");
    const rid = uniqueId("user");
    const agent = `stale-${s.slice(-8)}`;
    await script(s, [
      { tool_calls: [{ name: "update_working_memory", arguments: { patch: { name: "Ada" } } }] },
      { text: "Hi Ada." },
      { tool_calls: [{ name: "update_working_memory", arguments: { patch: { units: "rankine" } } }] },
      { text: "No." },
    ]);
    await agentWith(agent, `openai-compatible:${s}`, ["metric", "imperial"]);
    // The resource's own document, written by a key without ?agent=: no agent's schema is checked.
    expect((await api("PUT", `/v1/resources/${rid}/memory`, { document: { units: "kelvin" } })).status).toBe(200);

    const first = await turn(agent, rid, "I am Ada");
    expect(first.results[0]).toMatchObject({ is_error: false, output: { version: 2, document: { units: "kelvin", name: "Ada" } } });
    expect(first.updated).toHaveLength(1);
    const second = await turn(agent, rid, "use rankine");
    expect(second.results[0].is_error).toBe(true);
    expect(second.results[0].output).toMatch(/The working memory was not changed: \/units: .*metric/);
    expect(second.updated).toHaveLength(0);
    expect((await api("GET", `/v1/resources/${rid}/memory`)).body).toMatchObject({ document: { units: "kelvin", name: "Ada" }, version: 2 });
  });

  it("after the agent's schema changed: the tool and HTTP update other keys; a write to the stale key is 422 naming it", async () => {
    const s = uniqueId("wm-schema");
    const rid = uniqueId("user");
    const agent = `schema-${s.slice(-8)}`;
    await script(s, [
      { tool_calls: [{ name: "update_working_memory", arguments: { patch: { units: "metric" } } }] },
      { text: "Metric." },
      { tool_calls: [{ name: "update_working_memory", arguments: { patch: { name: "Grace" } } }] },
      { text: "Hi Grace." },
    ]);
    await agentWith(agent, `openai-compatible:${s}`, ["metric", "imperial"]);
    expect((await turn(agent, rid, "metric please")).updated).toHaveLength(1);
    // The schema changes: the stored "metric" is no longer allowed.
    await agentWith(agent, `openai-compatible:${s}`, ["celsius", "fahrenheit"]);

    const later = await turn(agent, rid, "I am Grace");
    expect(later.results[0]).toMatchObject({ is_error: false, output: { version: 2, document: { units: "metric", name: "Grace" } } });

    const path = `/v1/resources/${rid}/memory?agent=${agent}`;
    const patched = await api("PATCH", path, { name: "Ada" });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    // A whole document that keeps the stale key as it was is the same: only what the write changes is held to the schema.
    expect((await api("PUT", path, { document: { units: "metric", name: "Grace" } })).status).toBe(200);
    for (const [method, body, field] of [
      ["PATCH", { units: "imperial" }, "units"],
      ["PUT", { document: { units: "imperial", name: "Grace" } }, "document.units"],
      ["PATCH", { pets: ["cat"] }, "pets"],
    ] as const) {
      const res = await api(method, path, body);
      expect(res.status, `${method} ${JSON.stringify(body)}`).toBe(422);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
    }
    expect((await api("GET", path)).body).toMatchObject({ document: { units: "metric", name: "Grace" }, version: 4 });
  });
});
