// The inspector's view of what a turn did and what it waits for, in Chromium against `wrangler dev` and the
// fake model (priced through MODEL_PRICES): the waterfall of a turn's spans, tokens and cost per turn, an
// ask_user question answered through its form, an approval with edited arguments, a late tool result, the turns'
// order after an interrupt, and a turn two pause quotas hold, continued past each. Screenshots go to
// test-output/inspector/ (desktop and 375 px).

import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { tinyPdf, tinyPng } from "../support/tiny-files";
import { OUTPUT, screenshot } from "./harness";
import { live, sendTurn, useStack, waitForTurn } from "./stack";

// USD per million tokens for every scripted model (their names start with "inspector-").
// Quota definitions are read fresh on every call (no isolate cache), so a quota stored is seen at once.
const stack = useStack({ MODEL_PRICES: JSON.stringify({ "inspector-": { input: 10, output: 20, cached_input: 1 } }), QUOTA_CACHE_SECONDS: "0" });

const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** The JSON bodies of the POSTs the page sends to a session's actions. */
function actionPosts(page: Page): unknown[] {
  const bodies: unknown[] = [];
  page.on("request", (r: Request) => {
    if (r.method() === "POST" && /\/v1\/sessions\/[^/]+\/actions\//.test(r.url())) bodies.push(r.postDataJSON());
  });
  return bodies;
}

/** A waterfall's rows as "  label" (two spaces a level). */
const waterfallRows = (page: Page, turn: number) =>
  page
    .locator(".turn")
    .nth(turn)
    .locator(".waterfall li")
    .evaluateAll((rows) =>
      rows.map(
        (r) =>
          `${"  ".repeat(Number((r as HTMLElement).dataset.depth))}${r.querySelector(".span-label")?.textContent?.replace(/openai-compatible:inspector-\S+/, "M")}`,
      ),
    );

let sid = "";

describe("the inspector's turn views", () => {
  it("draws a turn's waterfall: parallel tool calls, an approval wait, a sub-agent's calls under it", async () => {
    const model = await stack.fake.script([
      {
        tool_calls: [
          { name: "calculator", arguments: { expression: "1 + 1" } },
          { name: "calculator", arguments: { expression: "2 + 2" } },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 60 },
      },
      { tool_calls: [{ name: "clock", arguments: {} }] },
      { tool_calls: [{ name: "run_subtask", arguments: { title: "Check", instructions: "Compute 3 * 3.", tools: ["calculator"] } }] },
      { tool_calls: [{ name: "calculator", arguments: { expression: "3 * 3" } }] },
      { text: "9." },
      { text: "All done." },
      { text: "Again." },
    ]);
    await stack.api.putAgent("waterfall", { model, tools: ["calculator", "clock", "run_subtask"], hitl_tools: ["clock"] });
    ({ session_id: sid } = await stack.api.createSession({ agent: "waterfall" }));
    const page = await stack.openSession(sid);
    await sendTurn(page, "Add, tell the time, then delegate.");
    await page.getByRole("region", { name: "Waiting for approval" }).waitFor();
    // The wait shows while it lasts: the clock's span is open, its wait hatched.
    const clockRow = page.locator(".waterfall li", { has: page.locator(".span-label", { hasText: "tool clock" }) });
    await clockRow.locator(".wait").waitFor();
    expect(await clockRow.textContent()).toMatch(/running · waited .+ for approval/);
    await new Promise((r) => setTimeout(r, 1200));
    await page.getByRole("button", { name: "Approve" }).click();
    await waitForTurn(page, 0, "completed");

    expect(await waterfallRows(page, 0)).toEqual([
      "turn waterfall",
      "  model M",
      "  tool calculator",
      "  tool calculator",
      "  model M",
      "  tool clock",
      "  model M",
      "  tool run_subtask",
      "  agent Check",
      "    model M",
      "    tool calculator",
      "    model M",
      "  model M",
    ]);
    expect(await page.locator(".turn").first().locator(".waterfall summary").textContent()).toMatch(/^Timeline · 13 spans · \d/);
    // The approval's wait (1.2 s or more of the clock's span) is in its row, in words and as a hatched part of the bar.
    expect(await clockRow.locator(".span-time").textContent()).toMatch(/waited (1\.[2-9]|[2-9]\.\d) s for approval$/);
    const [bar, wait] = await Promise.all([clockRow.locator(".bar").boundingBox(), clockRow.locator(".wait").boundingBox()]);
    expect(wait!.width).toBeGreaterThan(0.5 * bar!.width);
    // The two calculator calls of one model call ran side by side: their bars start where the first model call ends.
    const calcs = await page
      .locator(".turn")
      .first()
      .locator(".waterfall li[data-kind=tool]")
      .evaluateAll((rows) => rows.slice(0, 2).map((r) => Math.round(r.querySelector(".bar")!.getBoundingClientRect().left)));
    expect(Math.abs(calcs[0]! - calcs[1]!)).toBeLessThanOrEqual(3);
    await screenshot(page, "20-waterfall");
    await page
      .locator(".waterfall")
      .first()
      .screenshot({ path: join(OUTPUT, "20b-waterfall-detail.png") });

    // A second turn: the chart has a row per turn, tokens (cached apart) and cost.
    await sendTurn(page, "Once more.");
    await waitForTurn(page, 1, "completed");
    const chart = page.getByRole("region", { name: "Tokens and cost per turn" });
    // Turn 1: six model calls, the first 100 in (60 cached) and 20 out, the others 10 and 5; at $10/$20/$1 a million.
    expect(await chart.locator("li").allTextContents()).toEqual(["Turn 1 150 in (60 cached) · 45 out · $0.00186", "Turn 2 10 in · 5 out · $0.00020"]);
    const widths = await chart
      .locator(".stack:not(.cost)")
      .evaluateAll((stacks) => stacks.map((s) => [...s.querySelectorAll<HTMLElement>(".seg")].map((seg) => Math.round(seg.getBoundingClientRect().width))));
    const full = await chart
      .locator(".stack")
      .first()
      .evaluate((s) => Math.round(s.getBoundingClientRect().width));
    expect(widths[0]!.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(full - 2); // the largest turn fills its track
    expect(widths[0]![1]).toBeGreaterThan(widths[0]![0]!); // of 195 tokens: 60 cached, 90 fresh input, 45 output
    expect(widths[1]!.reduce((a, b) => a + b, 0)).toBeLessThan(full / 5);
    await screenshot(page, "21-usage-chart");
    expect(await overflow(page)).toBe(0);
    await page.close();
  });

  it("at 375 px the waterfall and the chart fit the screen", async () => {
    const page = await stack.openSession(sid, 375, 812);
    await page.locator(".waterfall li").first().waitFor();
    expect(await overflow(page)).toBe(0);
    for (const el of await page.locator(".waterfall .track, .usage-chart .stack").all()) {
      const box = (await el.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(375);
    }
    await screenshot(page, "22-phone-waterfall");
    await page
      .locator(".waterfall")
      .first()
      .screenshot({ path: join(OUTPUT, "22b-phone-waterfall-detail.png") });
    await page.getByRole("region", { name: "Tokens and cost per turn" }).screenshot({ path: join(OUTPUT, "22c-phone-usage-chart.png") });
    await page.close();
  });

  it("an ask_user question is a form from its schema; a refused answer shows the server's reason; the answer goes to the model", async () => {
    const schema = {
      type: "object",
      properties: {
        plan: { type: "string", enum: ["basic", "pro"], title: "Plan" },
        seats: { type: "integer", minimum: 1, title: "Seats" },
        annual: { type: "boolean", title: "Billed yearly" },
        note: { type: "string", title: "Note" },
      },
      required: ["plan", "seats"],
    };
    const model = await stack.fake.script([
      { tool_calls: [{ name: "ask_user", arguments: { question: "Which plan do you want?", response_schema: schema } }] },
      { text: "Pro it is." },
    ]);
    await stack.api.putAgent("asker", { model, tools: ["ask_user"] });
    const { session_id: asked } = await stack.api.createSession({ agent: "asker" });
    const page = await stack.openSession(asked);
    const posts = actionPosts(page);
    await sendTurn(page, "Sign me up.");
    const form = page.getByRole("form", { name: "Which plan do you want?" });
    await form.waitFor();
    expect(await page.locator(".session-head .badge").textContent()).toBe("waiting for an answer");

    // Checked in the page first: nothing is sent without the required fields.
    await form.getByRole("button", { name: "Answer" }).click();
    expect(await form.getByRole("alert").textContent()).toBe("plan: choose one");
    expect(posts).toEqual([]);
    await form.getByLabel("Plan").selectOption("pro");
    await form.getByLabel("Seats").fill("0");
    await form.getByLabel("Billed yearly").check();
    await screenshot(page, "23-question-form");
    // The server checks the rest: 0 seats breaks the schema's minimum, and its 422 names the path.
    await form.getByRole("button", { name: "Answer" }).click();
    const refused = page.getByRole("region", { name: "Questions for you" }).getByRole("alert");
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/seats/);
    expect((await stack.readLog(asked)).some((e) => e.type === "action.resolved")).toBe(false);

    await form.getByLabel("Seats").fill("3");
    await form.getByRole("button", { name: "Answer" }).click();
    await waitForTurn(page, 0, "completed");
    expect(posts).toEqual([{ response: { plan: "pro", seats: 0, annual: true } }, { response: { plan: "pro", seats: 3, annual: true } }]);
    const resolved = (await stack.readLog(asked)).find((e) => e.type === "action.resolved");
    expect(resolved?.payload).toMatchObject({ decision: "answered", response: { plan: "pro", seats: 3, annual: true } });
    expect(await page.locator(".turn .msg.assistant").last().textContent()).toBe("Pro it is.");
    expect(await page.locator('[data-tool="ask_user"] [data-approval]').textContent()).toBe("answered");
    await page.close();
  });

  it("a choices question at 375 px is a select answered from the keyboard", async () => {
    const model = await stack.fake.script([
      { tool_calls: [{ name: "ask_user", arguments: { question: "Tea or coffee?", choices: ["tea", "coffee"] } }] },
      { text: "Coffee." },
    ]);
    await stack.api.putAgent("chooser", { model, tools: ["ask_user"] });
    const { session_id: asked } = await stack.api.createSession({ agent: "chooser" });
    await stack.api.submitTurn(asked, "Pick for me.");
    const page = await stack.newPage(375, 812);
    const posts = actionPosts(page);
    await stack.signIn(page, `/inspect/sessions/${asked}`);
    const form = page.getByRole("form", { name: "Tea or coffee?" });
    await form.waitFor();
    expect(await overflow(page)).toBe(0);
    await screenshot(page, "24-phone-question");
    await form.getByLabel("Answer").focus();
    await form.getByLabel("Answer").selectOption("coffee");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await waitForTurn(page, 0, "completed");
    expect(posts).toEqual([{ response: "coffee" }]);
    await page.close();
  });

  it("an approval's arguments are edited as JSON: bad JSON is caught in the page, a schema break by the server, and the call runs with the edit", async () => {
    const model = await stack.fake.script([{ tool_calls: [{ name: "calculator", arguments: { expression: "2 + 3" } }] }, { text: "Done." }]);
    await stack.api.putAgent("editable", { model, tools: ["calculator"], hitl_tools: ["calculator"] });
    const { session_id: edited } = await stack.api.createSession({ agent: "editable" });
    const page = await stack.openSession(edited);
    const posts = actionPosts(page);
    await sendTurn(page, "Add 2 and 3.");
    const approvals = page.getByRole("region", { name: "Waiting for approval" });
    await approvals.getByRole("button", { name: "Edit arguments" }).click();
    const box = approvals.getByLabel("Arguments (JSON)");
    expect(JSON.parse(await box.inputValue())).toEqual({ expression: "2 + 3" });

    await box.fill('{"expression": ');
    await approvals.getByRole("button", { name: "Approve with these arguments" }).click();
    expect(await approvals.getByRole("alert").textContent()).toMatch(/^Arguments: not valid JSON/);
    expect(posts).toEqual([]);

    await box.fill('{"expression": 5}');
    await approvals.getByRole("button", { name: "Approve with these arguments" }).click();
    await expect.poll(() => approvals.getByRole("alert").textContent()).toMatch(/expression/);
    await screenshot(page, "25-approval-edit-refused");

    await box.fill('{"expression": "40 + 2"}');
    await approvals.getByRole("button", { name: "Approve with these arguments" }).click();
    await waitForTurn(page, 0, "completed");
    expect(posts).toEqual([
      { decision: "approve", args: { expression: 5 } },
      { decision: "approve", args: { expression: "40 + 2" } },
    ]);
    const log = await stack.readLog(edited);
    expect(log.filter((e) => e.type === "action.resolved").map((e) => e.payload)).toMatchObject([{ decision: "approved", args: { expression: "40 + 2" } }]);
    expect(await page.locator('[data-tool="calculator"] .preview').last().textContent()).toBe("result 42");
    await page.close();
  });

  it("attaches files to a turn and shows them and a tool's files: images inline, others as downloads, fetched with the key in a header", async () => {
    const [photo, chart, pdf] = [await tinyPng(6, [200, 30, 30]), await tinyPng(8, [30, 160, 30]), tinyPdf()];
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
    const made = [
      { data: b64(chart), media_type: "image/png", filename: "chart.png" },
      { data: b64(pdf), media_type: "application/pdf", filename: "report.pdf" },
    ];
    const model = await stack.fake.script([{ tool_calls: [{ name: "make_files", arguments: { files: made } }] }, { text: "Here they are." }]);
    await stack.api.putAgent("filer", { model, http_tools: [{ name: "make_files", url: `${stack.fake.baseUrl}/_tools/files` }] });
    const { session_id: filed } = await stack.api.createSession({ agent: "filer" });
    const page = await stack.newPage();
    const sent: { url: string; type: string | null; auth: boolean; body: unknown }[] = [];
    page.on("request", (r) => {
      if (r.method() !== "POST" || !r.url().includes(`/v1/sessions/${filed}/`)) return;
      const type = r.headers()["content-type"] ?? null;
      sent.push({
        url: new URL(r.url()).pathname + new URL(r.url()).search,
        type,
        auth: !!r.headers().authorization,
        body: type === "application/json" ? r.postDataJSON() : null,
      });
    });
    await stack.signIn(page, `/inspect/sessions/${filed}`);
    await live(page);
    await page.getByLabel("New turn").fill("Here are my files.");
    await page.getByLabel("Attach files").setInputFiles([
      { name: "photo.png", mimeType: "image/png", buffer: Buffer.from(photo) },
      { name: "brief.pdf", mimeType: "application/pdf", buffer: Buffer.from(pdf) },
    ]);
    expect(await page.getByRole("list", { name: "Attached files" }).locator("li").allTextContents()).toEqual([
      expect.stringMatching(/^photo\.png \d+ B Remove$/),
      expect.stringMatching(/^brief\.pdf \d+ B Remove$/),
    ]);
    await page.getByRole("button", { name: "Send" }).click();
    await waitForTurn(page, 0, "completed");

    // Two uploads with their bytes' media types, then the turn with a text part and two file parts.
    expect(sent.map((r) => [r.url.replace(/\/v1\/sessions\/[^/]+/, ""), r.type, r.auth])).toEqual([
      ["/files?filename=photo.png", "image/png", true],
      ["/files?filename=brief.pdf", "application/pdf", true],
      ["/turns", "application/json", true],
    ]);
    expect(sent[2]!.body).toEqual({
      input: [
        { type: "text", text: "Here are my files." },
        { type: "file", file_id: expect.any(String), media_type: "image/png" },
        { type: "file", file_id: expect.any(String), media_type: "application/pdf" },
      ],
    });

    const sentFiles = page.getByRole("list", { name: "Files sent in turn 1" });
    const toolFiles = page.getByRole("list", { name: "Files from make_files" });
    const images = (list: ReturnType<Page["locator"]>) =>
      list
        .locator("img")
        .evaluateAll((imgs) => imgs.map((i) => [(i as HTMLImageElement).alt, (i as HTMLImageElement).naturalWidth, (i as HTMLImageElement).src.slice(0, 5)]));
    await expect.poll(() => images(sentFiles)).toEqual([["photo.png", 6, "blob:"]]);
    await expect.poll(() => images(toolFiles)).toEqual([["chart.png", 8, "blob:"]]);
    expect(await sentFiles.getByRole("button").allTextContents()).toEqual(["brief.pdf"]);
    expect(await toolFiles.getByRole("button").allTextContents()).toEqual(["report.pdf"]);
    await screenshot(page, "26-files");

    const [download] = await Promise.all([page.waitForEvent("download"), toolFiles.getByRole("button", { name: "report.pdf" }).click()]);
    expect(download.suggestedFilename()).toBe("report.pdf");
    expect(Buffer.from(await (await download.createReadStream()).toArray().then((c) => Buffer.concat(c)))).toEqual(Buffer.from(pdf));

    await page.setViewportSize({ width: 375, height: 812 });
    expect(await overflow(page)).toBe(0);
    await screenshot(page, "27-phone-files");
    await page.close();
  });

  it("a resource page shows and edits its working memory (as the session's agent, under its schema) and searches its recall index; the session links to it", async () => {
    const model = await stack.fake.script([{ text: "Noted." }]);
    const schema = { type: "object", properties: { units: { enum: ["metric", "imperial"] } } };
    await stack.api.putAgent("rememberer", { model, memory: { working: { schema } } });
    const { session_id: remembered } = await stack.api.createSession({ agent: "rememberer", resource_id: "user-7" });
    await stack.api.submitTurn(remembered, "my locker code is 4711");
    await expect.poll(async () => (await stack.readLog(remembered)).at(-1)?.type, { timeout: 15_000 }).toBe("turn.completed");
    await stack.api.putMemory("user-7", { name: "Ada" });
    const page = await stack.newPage();
    const requests: { method: string; path: string; body: unknown }[] = [];
    page.on("request", (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith("/v1/resources/"))
        requests.push({ method: r.method(), path: url.pathname + url.search, body: r.postData() ? r.postDataJSON() : null });
    });
    await stack.signIn(page, `/inspect/sessions/${remembered}`);
    await live(page);
    await page.locator(".session-head").getByRole("link", { name: "user-7" }).click();
    await page.getByRole("heading", { name: "Resource user-7" }).waitFor();
    expect(page.url()).toBe(`${stack.runtime.base}/inspect/resources/user-7/agents/rememberer`);
    const memory = page.getByRole("region", { name: "Working memory" });
    await memory.locator(".memory-document").waitFor();
    expect(JSON.parse((await memory.locator(".memory-document").textContent())!)).toEqual({ name: "Ada" });
    expect(await memory.locator(".meta").textContent()).toMatch(/^as agent rememberer · version 1 · updated /);

    await memory.getByRole("button", { name: "Edit" }).click();
    await memory.getByLabel("Working memory (JSON)").fill("{name: Ada}");
    await memory.getByRole("button", { name: "Save" }).click();
    expect(await memory.getByRole("alert").textContent()).toMatch(/^Working memory: not valid JSON/);
    // The agent's schema applies to the editor's save: the server's 422 names the field, and nothing is stored.
    await memory.getByLabel("Working memory (JSON)").fill('{"name": "Ada", "units": "kelvin"}');
    await memory.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => memory.getByRole("alert").textContent()).toContain("document.units: ");
    expect(await stack.api.getMemory("user-7")).toMatchObject({ document: { name: "Ada" }, version: 1 });
    await memory.getByLabel("Working memory (JSON)").fill('{"name": "Ada", "city": "Lyon"}');
    await memory.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => memory.locator(".meta").textContent()).toMatch(/^as agent rememberer · version 2/);
    expect(await stack.api.getMemory("user-7")).toMatchObject({ document: { name: "Ada", city: "Lyon" }, version: 2 });

    // The index is written after the turn's end: search until the turn is there.
    const recall = page.getByRole("region", { name: "Recall" });
    await recall.getByLabel("Search earlier conversations").fill("locker");
    await expect
      .poll(async () => {
        await recall.getByRole("button", { name: "Search" }).click();
        return recall.locator(".hits li p:first-child").allTextContents();
      })
      .toEqual(["my locker code is 4711"]);
    expect(await recall.locator(".hits li .meta").textContent()).toContain(`user · `);
    expect(await recall.getByRole("link").getAttribute("href")).toBe(`/inspect/sessions/${remembered}`);
    expect(requests.filter((r) => r.method !== "GET")).toEqual([
      { method: "PUT", path: "/v1/resources/user-7/memory?agent=rememberer", body: { document: { name: "Ada", units: "kelvin" } } },
      { method: "PUT", path: "/v1/resources/user-7/memory?agent=rememberer", body: { document: { name: "Ada", city: "Lyon" } } },
    ]);
    expect(requests.at(-1)).toEqual({ method: "GET", path: "/v1/resources/user-7/memory/search?q=locker&limit=20", body: null });
    await screenshot(page, "28-resource");
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await overflow(page)).toBe(0);
    await screenshot(page, "29-phone-resource");
    await page.close();
  });

  it("a webhook call's result that arrives after an interrupt is a note on the cut turn", async () => {
    const gate = `${stack.fake.baseUrl}/_gates/late-${process.pid}`;
    const model = await stack.fake.script([{ tool_calls: [{ id: "call_late", name: "notify", arguments: {} }] }]);
    await stack.api.putAgent("notifier", { model, http_tools: [{ name: "notify", url: gate }] });
    const { session_id: cut } = await stack.api.createSession({ agent: "notifier" });
    const { turn_id } = await stack.api.submitTurn(cut, "notify the team");
    for (let i = 0; ((await (await fetch(`${gate}/state`)).json()) as { held: number }).held < 1; i++) {
      if (i > 500) throw new Error("the webhook call never reached the gate");
      await new Promise((r) => setTimeout(r, 20));
    }
    await stack.api.interrupt(cut, "changed my mind");
    const log = await stack.readLog(cut);
    expect(log.find((e) => e.turn_id === turn_id && e.type === "turn.cancelled")).toBeDefined();
    const page = await stack.openSession(cut);
    const turn = page.locator(".turn").first();
    await turn.getByText("Cancelled: changed my mind").first().waitFor();
    // The page is open and live when the call's answer arrives: the note comes over the stream.
    expect(await (await fetch(`${gate}/release`, { method: "POST", body: JSON.stringify({ sent_to: "team" }) })).json()).toEqual({ delivered: 1, dropped: 0 });
    const note = turn.locator(".note", { hasText: "Late result of notify" });
    await note.waitFor();
    expect(await note.textContent()).toContain("team");
    await screenshot(page, "30-late-result");
    await page.reload();
    await live(page);
    await page.locator(".turn").first().locator(".note", { hasText: "Late result of notify" }).waitFor();
    await page.close();
  });

  it("after an interrupt the turns show in the order they ran, live and after a reload", async () => {
    const model = await stack.fake.script([{ hang: true, text: "A partial", chunk_size: 1000 }, { text: "C answer" }, { text: "B answer" }]);
    await stack.api.putAgent("reordered", { model });
    const { session_id: id } = await stack.api.createSession({ agent: "reordered" });
    const a = await stack.api.submitTurn(id, "question A");
    for (let i = 0; !(await stack.readLog(id)).some((e) => e.type === "model.delta"); i++) {
      if (i > 500) throw new Error("turn A never streamed");
      await new Promise((r) => setTimeout(r, 20));
    }
    const b = await stack.api.submitTurn(id, "question B");
    const page = await stack.openSession(id);
    await waitForTurn(page, 1, "queued");
    const c = await stack.api.submitTurn(id, { input: "question C", on_busy: "interrupt" });
    // The model saw A (cut), then C, then B: B's answer is below C's question.
    const order = [a.turn_id, c.turn_id, b.turn_id];
    const shown = () => page.locator(".turn").evaluateAll((turns) => turns.map((t) => (t as HTMLElement).dataset.turnId));
    await waitForTurn(page, 2, "completed");
    expect(await shown()).toEqual(order);
    expect(await page.locator(".turn").allInnerTexts()).toEqual([
      expect.stringMatching(/question A[\s\S]*A partial/),
      expect.stringMatching(/question C[\s\S]*C answer/),
      expect.stringMatching(/question B[\s\S]*B answer/),
    ]);
    await screenshot(page, "31-interrupt-order");
    await page.reload();
    await live(page);
    await waitForTurn(page, 2, "completed");
    expect(await shown()).toEqual(order);
    await page.close();
  });

  it("a turn two pause quotas hold shows each pause, each continue (who, the note, which quota) and the resume, live and after a reload", async () => {
    const model = await stack.fake.script([{ text: "Over both quotas." }]);
    await stack.api.putAgent("held", { model });
    const [owner, resource] = [`quota-user-${process.pid}`, `quota-account-${process.pid}`];
    const quota = (id: string, init: { method: string; body?: unknown }) =>
      fetch(`${stack.runtime.base}/v1/quotas/${id}`, {
        method: init.method,
        headers: { authorization: `Bearer ${stack.runtime.key}`, "content-type": "application/json" },
        ...(init.body ? { body: JSON.stringify(init.body) } : {}),
      });
    // Any priced call crosses a limit of 0 USD: the end user's and the resource's quota both hold it.
    for (const [id, kind, subject] of [
      ["user-cap", "subject", owner],
      ["account-cap", "resource", resource],
    ] as const) {
      const body = { scope: { kind, id: subject }, limits: { usd: 0 }, window: "month", action: "pause" };
      expect((await quota(id, { method: "PUT", body })).status).toBe(201);
    }
    const { session_id: held } = await stack.api.createSession({ agent: "held", owner, resource_id: resource });
    const page = await stack.openSession(held);
    await sendTurn(page, "Spend a little.");
    const turn = page.locator(".turn").first();
    const pauses = turn.locator(".note", { hasText: "Paused by quota" });
    await pauses.first().waitFor();
    const turnId = (await turn.getAttribute("data-turn-id")) as string;
    const first = await stack.api.continueTurn(held, turnId, "support ticket 42");
    // The second quota still holds the call: the turn pauses again, naming it, until a second continue.
    await pauses.nth(1).waitFor();
    const second = await stack.api.continueTurn(held, turnId);
    await waitForTurn(page, 0, "completed");
    const by = `key_${createHash("sha256").update(stack.runtime.key).digest("hex").slice(0, 16)}`;
    const notes = [
      expect.stringMatching(new RegExp(`^Paused by quota ${first.quota_id}: Quota '${first.quota_id}' would be exceeded`)),
      `Continued over quota ${first.quota_id} by ${by}: “support ticket 42”`,
      expect.stringMatching(new RegExp(`^Paused by quota ${second.quota_id}: Quota '${second.quota_id}' would be exceeded`)),
      `Continued over quota ${second.quota_id} by ${by}`,
      `Resumed: continued by ${by}`,
    ];
    expect(await turn.locator(".note").allInnerTexts()).toEqual(notes);
    expect([first.quota_id, second.quota_id].sort()).toEqual(["account-cap", "user-cap"]);
    await screenshot(page, "32-quota-continued");
    await page.reload();
    await live(page);
    await waitForTurn(page, 0, "completed");
    expect(await page.locator(".turn").first().locator(".note").allInnerTexts()).toEqual(notes);
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await overflow(page)).toBe(0);
    await screenshot(page, "33-phone-quota-continued");
    for (const id of ["user-cap", "account-cap"]) expect((await quota(id, { method: "DELETE" })).status).toBe(200);
    await page.close();
  });

  it("no page broke its CSP or threw", () => {
    expect(stack.pageProblems).toEqual([]);
  });
});
