// The inspector's agent versions page (docs/guides/versions.md) and eval run pages (docs/guides/evals.md), in
// Chromium against `wrangler dev` and the fake model: an agent's versions with their hashes and authors, its
// labels with their moves and its traffic split, a diff between two chosen versions, linked from a session's
// header and the session list; an eval run's progress, aggregates and cases (scores with reasons, expected
// and actual output side by side, the diff), linked both ways with its case sessions; and two runs compared
// per scorer. Screenshots go to test-output/inspector/.
import { describe, expect, it } from "vitest";
import { screenshot } from "./harness";
import { useStack } from "./stack";

const stack = useStack();

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${stack.runtime.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.runtime.key}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function finished(id: string): Promise<any> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    const run = await api("GET", `/v1/evals/${id}`);
    if (run.status === "completed") return run;
  }
  throw new Error(`eval run ${id} did not finish`);
}

describe("the inspector's agent versions page", () => {
  it("lists versions, labels and traffic, and diffs two versions; a session's agent links to its version", async () => {
    const model = await stack.fake.script([]);
    await stack.api.putAgent("helper", { model, instructions: "Be brief." });
    await stack.api.putAgent("helper", { model, instructions: "Be thorough.", tools: ["calculator"] });
    await stack.api.putAgent("helper", { model, instructions: "Be thorough.", tools: ["calculator"] }); // unchanged: no version
    await stack.api.putAgentLabel("helper", "production", 1);
    await stack.api.putAgentLabel("helper", "canary", 2);
    await stack.api.putAgentLabel("helper", "production", 2);
    await stack.api.putAgentLabel("helper", "production", 1); // a rollback
    await stack.api.putAgentTraffic("helper", [
      { label: "production", weight: 90 },
      { label: "canary", weight: 10 },
    ]);
    const versions = (await stack.api.listAgentVersions("helper")).versions;
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    const { session_id: sid } = await stack.api.createSession({ agent: "helper@1" });

    const page = await stack.openSession(sid);
    const agentLink = page.getByTestId("session-agent");
    expect(await agentLink.textContent()).toBe("helper v1");
    await agentLink.click();
    await page.waitForURL(/\/inspect\/agents\/helper\/versions\/1$/);
    const rows = page.locator(".versions tbody tr");
    await rows.first().waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.version))).toEqual(["2", "1"]);
    const row1 = page.locator('.versions tr[data-version="1"]');
    expect(await row1.getAttribute("aria-current")).toBe("true");
    expect(await row1.locator("td").nth(1).textContent()).toBe(versions[1]!.content_hash.replace("sha256:", "").slice(0, 12));
    expect(await row1.locator("td").nth(3).textContent()).toBe(versions[1]!.created_by);
    expect(await row1.locator(".badge.label").allTextContents()).toEqual(["production"]);
    expect(await page.locator('.versions tr[data-version="2"] .badge.label').allTextContents()).toEqual(["canary"]);
    // The labels with their moves, and the split of new sessions.
    const production = page.getByRole("list", { name: "Labels" }).locator('> li[data-label="production"]');
    expect(await production.locator("strong").textContent()).toBe("production");
    expect(await production.getByRole("list", { name: "Moves of production" }).locator("li").allTextContents()).toEqual([
      expect.stringMatching(/^set to v1 · /),
      expect.stringMatching(/^v1 → v2 · /),
      expect.stringMatching(/^v2 → v1 · /),
    ]);
    const traffic = page.getByRole("list", { name: "Traffic split" });
    expect(await traffic.locator(".traffic-share").allTextContents()).toEqual(["weight 90 · 90%", "weight 10 · 10%"]);
    // Version 1's config, and the diff from it to version 2 (the first version is compared with the next).
    expect(JSON.parse((await page.getByTestId("version-config").textContent())!)).toMatchObject({ instructions: "Be brief." });
    const changes = page.getByRole("table", { name: "Changes from v1 to v2" });
    const instructions = changes.locator('tr[data-path="instructions"]');
    await instructions.waitFor();
    expect(await instructions.locator("td").allTextContents()).toEqual(["instructions", "changed", "Be brief.", "Be thorough."]);
    expect(await changes.locator("tr[data-path^=tools]").count()).toBeGreaterThan(0);
    await screenshot(page, "50-agent-versions");

    // Choosing the versions the other way round diffs them the other way.
    await page.getByLabel("From", { exact: true }).selectOption("2");
    await page.getByLabel("to", { exact: true }).selectOption("1");
    const back = page.getByRole("table", { name: "Changes from v2 to v1" });
    await back.waitFor();
    expect(await back.locator('tr[data-path="instructions"] td').allTextContents()).toEqual(["instructions", "changed", "Be thorough.", "Be brief."]);

    // The session list names each session's agent version and links to it.
    await page.goto(`${stack.runtime.base}/inspect`);
    const listed = page.locator(`tr[data-sid="${sid}"] td`).nth(1).getByRole("link");
    await listed.waitFor();
    expect(await listed.textContent()).toBe("helper v1");
    expect(await listed.getAttribute("href")).toBe("/inspect/agents/helper/versions/1");
    await page.close();
  });
});

describe("the inspector's eval run pages", () => {
  it("show a run's progress, aggregates and cases, link its case sessions, and compare two runs per scorer", async () => {
    await api("PUT", "/v1/datasets/sums", {
      items: [
        { input: "What is 2 + 2?", expected: "The answer is 4." },
        { input: "What is 3 * 5?", expected: "The answer is 15." },
        { input: "What is 10 - 7?", expected: "The answer is 4." },
      ],
    });
    const scorers = [{ type: "contains", value: "answer" }, { type: "exact" }, { type: "max_steps", max: 2 }];
    // Version 1 answers the third case right (so `exact` fails it); version 2 drops "answer" from the second and
    // gives the third the expected (wrong) answer. Slow chunks keep the first run visibly running for a while.
    const m1 = await stack.fake.script([
      { text: "The answer is 4.", chunk_size: 2, delay_ms: 150 },
      { text: "The answer is 15." },
      { text: "The answer is 3." },
    ]);
    const m2 = await stack.fake.script([{ text: "The answer is 4." }, { text: "15" }, { text: "The answer is 4." }]);
    await stack.api.putAgent("adder", { model: m1, instructions: "Compute." });
    const run1 = await api("POST", "/v1/evals", { agent: "adder", dataset: { name: "sums" }, scorers, concurrency: 1 });

    const page = await stack.newPage();
    await stack.signIn(page, "/inspect");
    await page.getByLabel("Eval run id").fill(run1.id);
    await page.getByRole("button", { name: "Show run" }).click();
    await page.waitForURL(new RegExp(`/inspect/evals/${run1.id}$`));
    await page.locator(".eval-summary").waitFor();
    await screenshot(page, "51-eval-run-running");
    await page.locator('.eval-progress [data-status="completed"]').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("run-progress").textContent()).toBe("3 of 3 cases done");
    expect(await page.getByTestId("run-meta").textContent()).toMatch(/^agent adder v1 · dataset sums v1 · concurrency 1 · /);
    const aggregate = (scorer: string) => page.locator(`.eval-aggregates tr[data-scorer="${scorer}"] > *`).allTextContents();
    expect(await aggregate("contains")).toEqual(["contains", "1.00", "100%", "3"]);
    expect(await aggregate("exact")).toEqual(["exact", "0.67", "67%", "3"]);
    expect(await aggregate("max_steps")).toEqual(["max_steps", "1.00", "100%", "3"]);
    const cases = page.getByRole("list", { name: "Cases" }).locator("> li");
    await page.locator('.eval-case[data-index="2"][data-status="done"]').waitFor();
    expect(await cases.count()).toBe(3);
    const third = cases.nth(2);
    expect(await third.locator(".badge.score").allTextContents()).toEqual(["contains 1.00 ✓", "exact 0.00 ✗", "max_steps 1.00 ✓"]);
    expect(await third.locator(".case-numbers").textContent()).toMatch(/ · 1 step$/);
    await third.locator("summary").click();
    expect(await third.getByTestId("case-expected").textContent()).toBe("The answer is 4.");
    expect(await third.getByTestId("case-output").textContent()).toBe("The answer is 3.");
    expect(await third.getByTestId("case-diff").locator(".removed").allTextContents()).toContain("-The answer is 4.\n");
    expect(await third.getByTestId("case-diff").locator(".added").allTextContents()).toContain("+The answer is 3.\n");
    const reasons = await third.getByRole("list", { name: "Scores of case 2" }).locator("li").allTextContents();
    expect(reasons).toHaveLength(3);
    expect(reasons[1]).toMatch(/^exact 0.00 fail: .+/);
    await screenshot(page, "52-eval-run");

    // A case's session names its run and links back to it.
    await third.getByRole("link", { name: /^session / }).click();
    await page.locator('[role="status"][data-state="live"]').waitFor({ timeout: 30_000 });
    const back = page.getByRole("link", { name: run1.id });
    expect(await back.getAttribute("href")).toBe(`/inspect/evals/${run1.id}`);
    await back.click();
    await page.locator('.eval-progress [data-status="completed"]').waitFor();

    // Version 2 on the same dataset, compared against run 1.
    await stack.api.putAgent("adder", { model: m2, instructions: "Compute tersely." });
    const run2 = await finished((await api("POST", "/v1/evals", { agent: "adder", dataset: { name: "sums" }, scorers, concurrency: 1 })).id);
    expect(run2.version).toBe(2);
    await page.goto(`${stack.runtime.base}/inspect/evals/${run2.id}`);
    await page.getByLabel("Baseline run id").fill(run1.id);
    await page.getByRole("button", { name: "Compare" }).click();
    await page.waitForURL(new RegExp(`/inspect/evals/${run1.id}/compare/${run2.id}$`));
    const row = (scorer: string) => page.locator(`.comparison tr[data-scorer="${scorer}"] > *`).allTextContents();
    await page.locator(".comparison tr[data-scorer]").first().waitFor();
    expect(await page.getByTestId("comparison-meta").textContent()).toMatch(/^3 shared cases · /);
    // Columns: scorer, baseline mean, mean, win, lose, tie.
    expect(await row("contains")).toEqual(["contains", "1.00", "0.67", "0", "1", "2"]);
    expect(await row("exact")).toEqual(["exact", "0.67", "0.67", "1", "1", "1"]);
    expect(await row("max_steps")).toEqual(["max_steps", "1.00", "1.00", "0", "0", "3"]);
    expect(await page.getByRole("region", { name: "Compared run" }).getByTestId("run-meta").textContent()).toMatch(/^agent adder v2 /);
    // Each shared case, its scores in both runs, opens on both outputs side by side.
    const pairs = page.getByRole("list", { name: "Cases side by side" }).locator("> li");
    await pairs.first().waitFor();
    expect(await pairs.count()).toBe(3);
    const second = pairs.nth(1);
    expect(await second.locator(".badge.score").allTextContents()).toEqual(["contains 1.00 → 0.00", "exact 1.00 → 0.00", "max_steps 1.00 → 1.00"]);
    await second.locator("summary").click();
    expect(await second.getByTestId("pair-baseline").textContent()).toBe("The answer is 15.");
    expect(await second.getByTestId("pair-compared").textContent()).toBe("15");
    await screenshot(page, "53-eval-compare");
    await page.close();

    // At 375 px wide each page fits the screen (wide tables scroll inside their panel).
    const phone = await stack.newPage(375, 812);
    await stack.signIn(phone, `/inspect/agents/helper`);
    for (const [path, ready, name] of [
      ["/inspect/agents/helper", ".changes", "54-phone-agent-versions"],
      [`/inspect/evals/${run1.id}`, '.eval-case[data-status="done"]', "55-phone-eval-run"],
      [`/inspect/evals/${run1.id}/compare/${run2.id}`, ".comparison tr[data-scorer]", "56-phone-eval-compare"],
    ] as const) {
      await phone.goto(`${stack.runtime.base}${path}`);
      await phone.locator(ready).first().waitFor();
      await screenshot(phone, name);
      expect(await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    }
    await phone.close();
  });

  it("no page broke its CSP or threw", () => {
    expect(stack.pageProblems).toEqual([]);
  });
});
