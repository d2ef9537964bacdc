// The web inspector in a real browser (Chromium, headless) against the runtime under `wrangler dev` and the
// fake model server. Each state is saved as a screenshot under test-output/inspector/. The tests run in
// order and share the runtime; the last one kills and restarts it.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { screenshot } from "./harness";
import { live, sendTurn, useStack, waitForTurn } from "./stack";

const stack = useStack();

const turnAt = (page: Page, n: number) => page.locator(".turn").nth(n);
/** A card's own disclosure button (not those of the cards inside it). */
const toggleOf = (card: ReturnType<Page["locator"]>) => card.locator(":scope > .card-head > button.disclose");

/** What the conversation shows, independent of which cards are expanded. */
function conversationShape(page: Page) {
  return page.evaluate(() => ({
    turns: [...document.querySelectorAll<HTMLElement>(".turn")].map((t) => ({
      status: t.dataset.status,
      messages: [...t.querySelectorAll(".msg p")].map((p) => p.textContent),
      usage: t.querySelector(".usage")?.textContent,
    })),
    cards: [...document.querySelectorAll<HTMLElement>("[data-call-id]")].map((c) => ({
      id: c.dataset.callId,
      tool: c.dataset.tool,
      status: c.dataset.status,
      inside: c.parentElement?.closest<HTMLElement>("[data-call-id]")?.dataset.callId ?? null,
    })),
    events: document.querySelectorAll(".events li").length,
  }));
}

let delegatedSid = "";

describe("the inspector", () => {
  it("is served at /inspect/* with a CSP allowing only its own scripts and origin; /v1 still reaches the API", async () => {
    const res = await fetch(`${stack.runtime.base}/inspect/sessions/some-session`, { headers: { accept: "text/html", "sec-fetch-mode": "navigate" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(directive);
    const html = await res.text();
    expect(html).toMatch(/<script type="module" crossorigin src="\/inspect\/assets\/[^"]+\.js"><\/script>/);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/); // nothing inline

    // A browser navigating to the API gets the API, not the page.
    const apiRes = await fetch(`${stack.runtime.base}/v1/agents`, { headers: { accept: "text/html", "sec-fetch-mode": "navigate" } });
    expect(apiRes.status).toBe(401);
    expect(await apiRes.json()).toMatchObject({ error: { code: "unauthorized" } });
  });

  it("signs in with the key kept in sessionStorage only, and opens the session of the address", async () => {
    await stack.api.putAgent("plain", { model: "demo:fast" });
    const { session_id: sid } = await stack.api.createSession({ agent: "plain" });
    const page = await stack.newPage();
    await page.goto(`${stack.runtime.base}/inspect/sessions/${sid}`);
    await page.getByLabel("API key").fill("not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toMatch(/invalid API key/i);
    await screenshot(page, "1-sign-in-refused");

    await page.getByLabel("API key").fill(stack.runtime.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: `Session ${sid}` }).waitFor();
    await live(page);
    expect(page.url()).toBe(`${stack.runtime.base}/inspect/sessions/${sid}`);
    const storage = await page.evaluate(() => ({ session: { ...sessionStorage }, local: localStorage.length }));
    expect(Object.values(storage.session)).toEqual([stack.runtime.key]);
    expect(storage.local).toBe(0);
    await screenshot(page, "2-signed-in-empty-session");

    // Open-by-id, from the sessions page, for a session that does not exist.
    await page.getByRole("link", { name: "Agent runtime inspector" }).click();
    // Submitted from the keyboard: the recent sessions' table may still appear above the form and move its button
    // between a click's aim and the click (a click here once waited in vain for the page, in about fifteen runs).
    await page.getByLabel("Session id").fill("ses_nothing_here");
    await page.getByLabel("Session id").press("Enter");
    await page.getByRole("heading", { name: "No such session" }).waitFor();
    expect(page.url()).toBe(`${stack.runtime.base}/inspect/sessions/ses_nothing_here`);
    await page.close();
  });

  it("starts a session from the form; a nested run_subtask is a collapsed card holding the child's tool card, expanded on click", async () => {
    const model = await stack.fake.script([
      { text: "Delegating.", tool_calls: [{ name: "run_subtask", arguments: { title: "Multiply", instructions: "Compute 6 * 7.", tools: ["calculator"] } }] },
      { tool_calls: [{ name: "calculator", arguments: { expression: "6 * 7" } }] },
      { text: "The product is 42." },
      { text: "The sub-agent found 42.", chunk_size: 3, delay_ms: 15 },
    ]);
    await stack.api.putAgent("delegator", { model, tools: ["run_subtask", "calculator"] });
    const page = await stack.newPage();
    await stack.signIn(page, "/inspect");
    await page.getByLabel("Agent", { exact: true }).selectOption("delegator");
    await page.getByRole("button", { name: "Start session" }).click();
    await page.waitForURL(/\/inspect\/sessions\/[^/]+$/);
    delegatedSid = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
    await live(page);

    await sendTurn(page, "What is 6 times 7? Delegate it.");
    await waitForTurn(page, 0, "completed");

    const parent = page.locator('[data-tool="run_subtask"]');
    const child = parent.locator('[data-tool="calculator"]');
    expect(await parent.count()).toBe(1);
    expect(await child.count()).toBe(1); // inside the parent's card
    expect(await toggleOf(parent).getAttribute("aria-expanded")).toBe("false");
    expect(await toggleOf(parent).textContent()).toBe("Expand");
    expect(await child.isVisible()).toBe(false);
    expect(await parent.getAttribute("data-status")).toBe("succeeded");
    expect(await child.getAttribute("data-status")).toBe("succeeded");
    expect(await turnAt(page, 0).locator(".msg.assistant").last().textContent()).toBe("The sub-agent found 42.");
    // Four model calls of the fake (10 input and 5 output tokens each), the child's included; no known price.
    expect(await turnAt(page, 0).locator(".usage").textContent()).toBe("40 in · 20 out tokens · cost unknown");
    await expect.poll(() => page.locator("#meter-llm_calls").getAttribute("value")).toBe("4");
    expect(await page.locator("#meter-subtasks").getAttribute("value")).toBe("1");
    await screenshot(page, "3-subtask-collapsed");

    await page.getByRole("button", { name: "Expand" }).first().click();
    expect(await toggleOf(parent).getAttribute("aria-expanded")).toBe("true");
    expect(await child.isVisible()).toBe(true);
    expect(await parent.getByRole("region", { name: "Sub-agent Multiply" }).textContent()).toContain("The product is 42.");
    // The child's card, from the keyboard.
    await toggleOf(child).focus();
    await page.keyboard.press("Enter");
    expect(await toggleOf(child).getAttribute("aria-expanded")).toBe("true");
    expect(await child.locator(".card-body").textContent()).toContain('"expression": "6 * 7"');
    await screenshot(page, "4-subtask-expanded");
    await page.close();
  });

  it("an approval clicked in the page runs the tool and the turn completes", async () => {
    const model = await stack.fake.script([{ tool_calls: [{ name: "calculator", arguments: { expression: "2 + 3" } }] }, { text: "Approved, and 2 + 3 = 5." }]);
    await stack.api.putAgent("careful", { model, tools: ["calculator"], hitl_tools: ["calculator"] });
    const { session_id: sid } = await stack.api.createSession({ agent: "careful" });
    const page = await stack.openSession(sid);
    await sendTurn(page, "Add 2 and 3.");

    const approvals = page.getByRole("region", { name: "Waiting for approval" });
    await approvals.waitFor();
    expect(await approvals.textContent()).toMatch(/calculator wants to run with \{"expression":"2 \+ 3"\}Deadline .+ \(in 1[45] min/);
    const card = page.locator('[data-tool="calculator"]');
    expect(await card.getAttribute("data-status")).toBe("waiting");
    expect(await card.locator("[data-approval]").textContent()).toBe("awaiting approval");
    await screenshot(page, "5-approval-pending");

    await page.getByLabel("Reason (optional)").fill("looks right");
    await page.getByRole("button", { name: "Approve" }).click();
    await waitForTurn(page, 0, "completed");
    expect(await card.getAttribute("data-status")).toBe("succeeded");
    expect(await card.locator("[data-approval]").textContent()).toBe("approved");
    expect(await card.locator(".preview").last().textContent()).toBe("result 5");
    expect(await approvals.count()).toBe(0);
    // The budget meters follow the thread read model: two model calls and one tool call, 10 + 5 tokens each call.
    await expect
      .poll(() => page.getByRole("region", { name: "Budget" }).textContent())
      .toMatch(/Model calls 2 of 60Tool calls 1 of 200.*20 input · 10 output tokens/);
    const resolved = (await stack.readLog(sid)).find((e) => e.type === "action.resolved");
    expect(resolved?.payload).toMatchObject({ decision: "approved", reason: "looks right" });
    // The event timeline shows each event's payload in short, without expanding it.
    const timelineRow = (type: string) => page.locator(`.events li[data-type="${type}"] .payload`).first();
    expect(await timelineRow("tool.started").textContent()).toContain('"expression":"2 + 3"');
    expect(await timelineRow("action.resolved").textContent()).toContain('"reason":"looks right"');
    await screenshot(page, "6-approval-done");
    await page.close();
  });

  it("a reload shows the same conversation and cards", async () => {
    const page = await stack.openSession(delegatedSid);
    await page.getByRole("button", { name: "Expand" }).first().click();
    const before = await conversationShape(page);
    expect(before.cards.map((c) => [c.tool, c.inside === null])).toEqual([
      ["run_subtask", true],
      ["calculator", false],
    ]);
    await page.reload();
    await live(page);
    expect(await conversationShape(page)).toEqual(before);
    await screenshot(page, "7-after-reload");
    await page.close();
  });

  it("the sessions page lists the deployment's sessions newest first, and a row opens its session", async () => {
    const { sessions } = await stack.api.listSessions();
    expect(sessions.length).toBeGreaterThanOrEqual(3);
    const page = await stack.newPage();
    await stack.signIn(page, "/inspect");
    const rows = page.locator(".session-list tbody tr");
    await rows.first().waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-sid")))).toEqual(sessions.map((s) => s.session_id));
    const newest = sessions[0]!;
    expect(await rows.first().textContent()).toContain(newest.agent);
    await screenshot(page, "6-session-list");
    await rows.first().getByRole("link", { name: newest.session_id }).click();
    await page.getByRole("heading", { name: `Session ${newest.session_id}` }).waitFor();
    await page.close();
  });

  it("at 375 px wide the session list shows each session's agent and status on the screen", async () => {
    const newest = (await stack.api.listSessions()).sessions[0]!;
    const page = await stack.newPage(375, 812);
    await stack.signIn(page, "/inspect");
    const row = page.locator(".session-list tbody tr").first();
    await row.waitFor();
    await screenshot(page, "6b-phone-session-list");
    for (const [cell, text] of [
      [1, newest.agent],
      [2, newest.status],
    ] as const) {
      const td = row.locator("td").nth(cell);
      expect(await td.textContent()).toContain(text);
      const box = (await td.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(375);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await page.close();
  });

  it("keeps what is typed while a message is being sent: only the text that was sent is cleared", async () => {
    const model = await stack.fake.script([{ text: "A slow answer, two characters at a time.", chunk_size: 2, delay_ms: 60 }]);
    await stack.api.putAgent("typist", { model });
    const { session_id: sid } = await stack.api.createSession({ agent: "typist" });
    const page = await stack.openSession(sid);
    // The answer to the submission is held until the next message is typed: the turn runs meanwhile.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(`**/v1/sessions/${sid}/turns`, async (route) => {
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    await sendTurn(page, "First message.");
    await page.getByLabel("Message to the running turn").fill("Typed while it was sent.");
    release();
    await page.getByRole("button", { name: "Send" }).and(page.locator(":enabled")).waitFor();
    expect(await page.locator("#composer-input").inputValue()).toBe("Typed while it was sent.");
    await page.unroute(`**/v1/sessions/${sid}/turns`);
    await waitForTurn(page, 0, "completed");
    await page.close();
  });

  it("sends a live message to the running turn, queues, promotes and removes turns, and interrupts", async () => {
    const model = await stack.fake.script([
      { text: "Working on the first part of the answer now.", chunk_size: 2, delay_ms: 60 },
      { text: "Cats, noted. Still going", stall_after: 2 },
      { text: "Answering the second question." },
    ]);
    await stack.api.putAgent("chatty", { model });
    const { session_id: sid } = await stack.api.createSession({ agent: "chatty" });
    const page = await stack.openSession(sid);
    await sendTurn(page, "Tell me something.");
    await page.getByLabel("Message to the running turn").fill("Also mention cats.");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".msg.injected", { hasText: "Also mention cats." }).waitFor();

    for (const input of ["First queued", "Second queued"]) {
      await page.getByLabel("Message to the running turn").fill(input);
      await page.getByRole("button", { name: "Queue as next turn" }).click();
      await page.locator(".queue li", { hasText: input }).waitFor();
    }
    const queue = page.getByRole("region", { name: "Queue" });
    await queue.getByRole("button", { name: "Promote" }).click();
    await expect.poll(() => queue.locator("li p").allTextContents()).toEqual(["Second queued", "First queued"]);
    await screenshot(page, "8-running-with-queue");
    await queue.locator("li", { hasText: "First queued" }).getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => queue.locator("li p").allTextContents()).toEqual(["Second queued"]);

    await page.getByRole("button", { name: "Interrupt" }).click();
    await waitForTurn(page, 0, "cancelled");
    // The queued turn starts when the interrupted one ends.
    const second = page.locator(".turn", { hasText: "Second queued" });
    await second.and(page.locator('[data-status="completed"]')).waitFor();
    expect(await second.locator(".msg.assistant").textContent()).toBe("Answering the second question.");
    expect(await page.locator(".turn", { hasText: "First queued" }).getAttribute("data-status")).toBe("cancelled");
    expect(await queue.textContent()).toContain("Nothing queued.");
    await screenshot(page, "9-interrupted-then-queued-turn");
    await page.close();
  });

  it("runs a message now in place of the running turn (on_busy interrupt)", async () => {
    const model = await stack.fake.script([{ text: "A long answer that never ends", stall_after: 2 }, { text: "Short answer." }]);
    await stack.api.putAgent("superseded", { model });
    const { session_id: sid } = await stack.api.createSession({ agent: "superseded" });
    const page = await stack.openSession(sid);
    await sendTurn(page, "Tell me everything.");
    await page.getByLabel("Message to the running turn").fill("Just the short version.");
    await page.getByRole("button", { name: "Run this now" }).click();
    await waitForTurn(page, 0, "cancelled");
    const next = page.locator(".turn", { hasText: "Just the short version." });
    await next.and(page.locator('[data-status="completed"]')).waitFor();
    expect(await next.locator(".msg.assistant").textContent()).toBe("Short answer.");
    const cancelled = (await stack.readLog(sid)).find((e) => e.type === "turn.cancelled");
    expect(cancelled?.type === "turn.cancelled" && cancelled.payload.reason).toBe("superseded");
    await page.close();
  });

  it("at 375 px wide the page has no horizontal scroll, cards and events expanded", async () => {
    const model = await stack.fake.script([{ tool_calls: [{ name: "calculator", arguments: { expression: `${"1+".repeat(150)}1` } }] }, { text: "Refused." }]);
    await stack.api.putAgent("careful-phone", { model, tools: ["calculator"], hitl_tools: ["calculator"] });
    const { session_id: sid } = await stack.api.createSession({ agent: "careful-phone" });
    await stack.api.submitTurn(sid, "Add up a long list of ones, please.");
    const page = await stack.newPage(375, 812);
    await stack.signIn(page, `/inspect/sessions/${sid}`);
    await page.getByRole("region", { name: "Waiting for approval" }).waitFor();
    for (const button of await page.getByRole("button", { name: "Expand" }).all()) await button.click();
    await page.locator(".events summary").first().click();
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(await overflow()).toBe(0);
    await screenshot(page, "10-phone-approval");

    await page.getByRole("button", { name: "Reject" }).click();
    await waitForTurn(page, 0, "completed");
    expect(await page.locator('[data-tool="calculator"] [data-approval]').textContent()).toBe("rejected");
    await page.goto(`${stack.runtime.base}/inspect/sessions/${delegatedSid}`);
    await live(page);
    for (const button of await page.getByRole("button", { name: "Expand" }).all()) await button.click();
    await page.getByRole("button", { name: "Expand" }).first().click(); // the child's card, visible now
    expect(await overflow()).toBe(0);
    await screenshot(page, "11-phone-subtask");
    await page.close();
  });

  it("the runtime killed and restarted mid-turn: the page shows reconnecting, then catches up with every event once", async () => {
    const story = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const model = await stack.fake.script([{ text: story, chunk_size: 6, delay_ms: 60 }, { text: "Recovered after the restart." }]);
    await stack.api.putAgent("storyteller", { model });
    const { session_id: sid } = await stack.api.createSession({ agent: "storyteller" });
    const page = await stack.openSession(sid);
    await sendTurn(page, "Tell me a long story.");
    await page.waitForFunction(() => (document.querySelector(".msg.assistant.streaming p")?.textContent?.length ?? 0) > 30);

    await stack.runtime.kill();
    const status = page.getByRole("status");
    await page.locator('[role="status"][data-state="reconnecting"]').waitFor({ timeout: 15_000 });
    expect(await status.textContent()).toBe("Reconnecting…");
    await screenshot(page, "12-reconnecting");

    await stack.runtime.start();
    await waitForTurn(page, 0, "completed", 45_000);
    await live(page);
    const log = await stack.readLog(sid);
    expect(log.at(-1)?.type).toBe("turn.completed");
    expect(log.some((e) => e.type === "run.status" && e.payload.phase === "recovering")).toBe(true);
    const rendered = await page.locator(".events li").evaluateAll((rows) => rows.map((r) => Number((r as HTMLElement).dataset.sequence)));
    expect(rendered).toEqual(log.map((e) => e.sequence));
    expect(await page.getByTestId("event-count").textContent()).toBe(`${log.length} of ${log.length} events`);
    expect(await turnAt(page, 0).locator(".msg.assistant").last().textContent()).toBe("Recovered after the restart.");
    await screenshot(page, "13-caught-up");

    await page.getByLabel("Filter by type").selectOption("model.delta");
    expect(await page.locator(".events li").count()).toBe(log.filter((e) => e.type === "model.delta").length);
    await page.close();
  });

  it("no page broke its CSP or threw", () => {
    expect(stack.pageProblems).toEqual([]);
  });
});
