// Labels and traffic through HTTP: a label points at a version (each move recorded with who made it), an
// agent's routes split new sessions between labels by weight, the same label for the same resource, a
// rollback is a move back, and bad input (a version or label that does not exist, weights summing to 0) is a
// 422 naming the field with nothing stored.
import { describe, expect, it } from "vitest";
import { api, createAgent, expectOk, expectRefused } from "../../support/api";

const uniqueName = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

/** An agent with versions 1 and 2, `production` on 1 and `canary` on 2. */
async function twoVersions(): Promise<string> {
  const name = uniqueName("canary");
  await createAgent({ name, model: "demo:x", instructions: "one" });
  await createAgent({ name, model: "demo:x", instructions: "two" });
  await expectOk("PUT", `/v1/agents/${name}/labels/production`, { version: 1 });
  await expectOk("PUT", `/v1/agents/${name}/labels/canary`, { version: 2 });
  return name;
}

/** Opens a session per resource, a few at a time; answers each one's label and version. */
async function open(name: string, resources: string[]): Promise<{ label?: string; agent_version: number }[]> {
  const out: { label?: string; agent_version: number }[] = [];
  for (let i = 0; i < resources.length; i += 40) {
    const batch = resources.slice(i, i + 40).map((resource_id) => expectOk("POST", "/v1/sessions", { agent: name, resource_id }));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

describe("labels and traffic", () => {
  it("labels point at versions, record who moved them, and open sessions by name@label", async () => {
    const name = await twoVersions();
    const { labels } = await expectOk("GET", `/v1/agents/${name}/labels`);
    expect(labels.map((l: any) => [l.label, l.version])).toEqual([
      ["canary", 2],
      ["production", 1],
    ]);
    expect(labels[0].moved_by).toMatch(/^key_/);
    expect((await expectOk("POST", "/v1/sessions", { agent: `${name}@canary` })).agent_version).toBe(2);

    // A rollback is a move back, kept in the label's history.
    await expectOk("PUT", `/v1/agents/${name}/labels/canary`, { version: 1 });
    const canary = (await expectOk("GET", `/v1/agents/${name}/labels`)).labels[0];
    expect(canary.history.map((m: any) => [m.from_version, m.version])).toEqual([
      [null, 2],
      [2, 1],
    ]);
    expect((await expectOk("POST", "/v1/sessions", { agent: `${name}@canary` })).agent_version).toBe(1);
  });

  it("bad input names the field and stores nothing", async () => {
    const name = await twoVersions();
    await expectRefused("PUT", `/v1/agents/${name}/labels/canary`, "version", { version: 7 }, `agent '${name}' has no version 7`);
    await expectRefused("PUT", `/v1/agents/${name}/labels/9lives`, "label", { version: 1 });
    await expectRefused("PUT", `/v1/agents/${name}/traffic`, "routes", {
      routes: [
        { label: "production", weight: 0 },
        { label: "canary", weight: 0 },
      ],
    });
    await expectRefused("PUT", `/v1/agents/${name}/traffic`, "routes.1.label", {
      routes: [
        { label: "production", weight: 1 },
        { label: "beta", weight: 1 },
      ],
    });
    await expectRefused("PUT", `/v1/agents/${name}/traffic`, "routes.0.weight", { routes: [{ label: "production", weight: -1 }] });
    expect((await expectOk("GET", `/v1/agents/${name}/labels`)).labels.map((l: any) => l.version)).toEqual([2, 1]);
    expect((await expectOk("GET", `/v1/agents/${name}/traffic`)).routes).toEqual([]);
    expect((await api("PUT", `/v1/agents/${uniqueName("none")}/labels/production`, { version: 1 })).status).toBe(404);
  });

  it("a 90/10 split sends about a tenth of 200 new sessions to the canary, the same label for the same resource", async () => {
    const name = await twoVersions();
    const routes = [
      { label: "production", weight: 90 },
      { label: "canary", weight: 10 },
    ];
    const stored = await expectOk("PUT", `/v1/agents/${name}/traffic`, { routes });
    expect(stored).toMatchObject({ agent: name, routes, updated_by: expect.stringMatching(/^key_/) });

    const resources = Array.from({ length: 200 }, (_, i) => `user-${i}`);
    const first = await open(name, resources);
    const canaries = first.filter((s) => s.label === "canary");
    // Binomial(200, 0.1): 20 expected, standard deviation 4.2; these bounds are over 3 deviations out.
    expect(canaries.length).toBeGreaterThanOrEqual(6);
    expect(canaries.length).toBeLessThanOrEqual(34);
    for (const s of first) expect(s.agent_version).toBe(s.label === "canary" ? 2 : 1);

    // Sticky: the same resources land on the same labels again.
    const again = await open(name, resources.slice(0, 20));
    expect(again.map((s) => s.label)).toEqual(first.slice(0, 20).map((s) => s.label));

    // Rollback of the canary: its label moves back, and the same routes now open version 1 everywhere.
    await expectOk("PUT", `/v1/agents/${name}/labels/canary`, { version: 1 });
    const rolledBack = await open(name, resources.slice(0, 20));
    expect(rolledBack.map((s) => s.agent_version)).toEqual(Array(20).fill(1));

    // No routes: new sessions run the newest version.
    await expectOk("PUT", `/v1/agents/${name}/traffic`, { routes: [] });
    expect((await expectOk("POST", "/v1/sessions", { agent: name, resource_id: "user-1" })).agent_version).toBe(2);
  }, 240_000);
});
