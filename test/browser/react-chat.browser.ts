// The example front end (examples/react-chat: a stock `useChat` with DefaultChatTransport) in Chromium against
// the runtime under `wrangler dev`, served by Vite's preview server (which forwards /v1 to the runtime, as the
// example's dev server does). A streamed tool turn asks for an approval, takes it, and is picked up again
// after a page reload in the middle of its answer; Stop interrupts; an attached picture reaches the model and
// stays in the conversation. Screenshots go to test-output/react-chat/.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../node/support/wrangler-dev";
import { tinyPng } from "../support/tiny-files";
import { EXAMPLE, ROOT } from "./harness";
import { useStack } from "./stack";

const SHOTS = join(ROOT, "test-output", "react-chat");
const ANSWER = "The answer is fourteen, worked out step by step for you.";

const stack = useStack();
let preview: ChildProcess;
let pageBase: string;
const pageErrors: string[] = [];

/** `vite preview` of the built example, forwarding /v1 to the runtime; ready when it serves the page. */
async function startPreview(runtimeBase: string): Promise<string> {
  const port = await freePort();
  const vite = join(EXAMPLE, "node_modules", "vite", "bin", "vite.js");
  preview = spawn(process.execPath, [vite, "preview", "--host", "127.0.0.1", "--port", String(port), "--strictPort"], {
    cwd: EXAMPLE,
    env: { ...process.env, RUNTIME_URL: runtimeBase },
    stdio: "ignore",
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    try {
      if ((await fetch(base)).ok) return base;
    } catch {
      if (tries > 150) throw new Error("vite preview of the example did not start");
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  pageBase = await startPreview(stack.runtime.base);
  mkdirSync(SHOTS, { recursive: true });
});

// Registered after useStack's, so it runs before the runtime stops.
afterAll(() => {
  if (preview?.pid) process.kill(-preview.pid, "SIGTERM");
});

async function openPage(): Promise<Page> {
  const page = await stack.browser.context.newPage();
  page.on("pageerror", (err) => pageErrors.push(String(err)));
  await page.goto(pageBase);
  await page.getByLabel("API key").fill(stack.runtime.key);
  return page;
}

/** Picks the agent, starts a chat (the session id goes in the address's hash) and sends `text`. */
async function startChat(page: Page, agent: string, text: string): Promise<string> {
  await page.getByLabel("Agent").selectOption(agent);
  await page.getByRole("button", { name: "New chat" }).click();
  await page.waitForFunction(() => location.hash.length > 1);
  const sid = await page.evaluate(() => location.hash.slice(1));
  await page.getByPlaceholder(/Try:/).fill(text);
  await page.getByRole("button", { name: "Send" }).click();
  return sid;
}

const ready = (page: Page) => page.getByRole("button", { name: "Send" }).and(page.locator(":enabled")).waitFor({ timeout: 30_000 });
const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const assistantText = (page: Page) => page.locator("article.assistant > p").allTextContents();
/** Whether the page shows `selector` as a decoded image `width` pixels wide (so its bytes were fetched). */
const imageShown = (page: Page, selector: string, width: number) =>
  page.waitForFunction(
    ([selector, width]) => {
      const img = document.querySelector<HTMLImageElement>(selector as string);
      return img?.complete === true && img.naturalWidth === width;
    },
    [selector, width],
    { timeout: 30_000 },
  );
/** The image_url parts of the user messages in one Chat Completions request. */
const imageUrls = (request: any): string[] =>
  request.messages
    .filter((m: any) => m.role === "user" && Array.isArray(m.content))
    .flatMap((m: any) => m.content.filter((c: any) => c.type === "image_url").map((c: any) => c.image_url.url));

describe("examples/react-chat: a stock useChat page", () => {
  it("streams a tool turn, asks for and takes an approval, and picks the running turn up after a reload", async () => {
    const model = await stack.fake.script([
      { tool_calls: [{ id: "call_1", name: "calculator", arguments: { expression: "2 * (3 + 4)" } }] },
      { text: ANSWER, chunk_size: 3, delay_ms: 120 },
    ]);
    await stack.api.putAgent("careful-chat", { model, tools: ["calculator"], hitl_tools: ["calculator"] });
    const page = await openPage();
    const sid = await startChat(page, "careful-chat", "what is 2 * (3 + 4)?");

    const card = page.locator(".tool").first();
    await card.getByRole("button", { name: "Approve" }).waitFor({ timeout: 30_000 });
    expect(await card.textContent()).toContain("2 * (3 + 4)");
    await shot(page, "1-approval-requested");
    await card.getByRole("button", { name: "Approve" }).click();

    // The call runs and the answer starts streaming; reload in the middle of it.
    await page.locator(".tool.output-available").waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => (document.querySelector("article.assistant > p")?.textContent?.length ?? 0) > 6, null, { timeout: 30_000 });
    const partial = (await assistantText(page)).join("");
    expect(partial.length).toBeLessThan(ANSWER.length);
    await shot(page, "2-streaming");
    await page.reload();

    // Same session (from the hash), its messages from GET .../messages, then the running turn resumed.
    await page.waitForFunction((answer) => document.querySelector("article.assistant > p")?.textContent === answer, ANSWER, { timeout: 30_000 });
    // The stream ends (the page is ready again) once the turn has completed.
    await ready(page);
    await shot(page, "3-after-reload");
    expect(await assistantText(page)).toEqual([ANSWER]);
    expect(await page.locator("article.user").allTextContents()).toEqual(["what is 2 * (3 + 4)?"]);
    expect(await page.locator(".tool.output-available pre").textContent()).toBe("14");

    const log = await stack.readLog(sid);
    expect(log.filter((e) => e.type === "turn.submitted")).toHaveLength(1);
    expect(log.find((e) => e.type === "action.resolved")?.payload).toMatchObject({ decision: "approved" });
    expect(log.at(-1)?.type).toBe("turn.completed");
    await page.close();
  });

  it("a denied call ends in its error card; Stop interrupts a streaming answer", async () => {
    const model = await stack.fake.script([
      { tool_calls: [{ id: "call_2", name: "calculator", arguments: { expression: "1 + 1" } }] },
      { text: "I will not compute it then." },
      { text: "a very long answer that streams slowly ".repeat(20), chunk_size: 2, delay_ms: 100 },
    ]);
    await stack.api.putAgent("deny-chat", { model, tools: ["calculator"], hitl_tools: ["calculator"] });
    const page = await openPage();
    const sid = await startChat(page, "deny-chat", "add one and one");
    await page.getByRole("button", { name: "Deny" }).click();
    await page.waitForFunction(() => document.body.textContent?.includes("I will not compute it then."), null, { timeout: 30_000 });
    expect(await page.locator(".tool").first().getAttribute("class")).toContain("output-denied");

    await page.getByPlaceholder(/Try:/).fill("tell me a long story");
    await page.getByRole("button", { name: "Send" }).click();
    await page.waitForFunction(() => document.body.textContent?.includes("streams slowly"), null, { timeout: 30_000 });
    await page.getByRole("button", { name: "Stop" }).click();
    await ready(page);
    await shot(page, "4-denied-and-stopped");

    const log = await stack.readLog(sid);
    expect(log.filter((e) => e.type === "turn.completed")).toHaveLength(1);
    expect(log.at(-1)).toMatchObject({ type: "turn.cancelled" });
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('"Add the demo agent" picks the new agent even when the Quickstart\'s demo exists, so its calculator asks for approval', async () => {
    await stack.api.putAgent("demo", { model: "demo:slow", tools: ["calculator", "clock"] });
    const page = await openPage();
    await page
      .getByLabel("Agent")
      .locator("option", { hasText: /^demo$/ })
      .waitFor({ state: "attached" });
    await page.getByLabel("Agent").selectOption("demo");
    await page.getByRole("button", { name: "Add the demo agent" }).click();
    await page.waitForFunction(() => (document.querySelector("select") as HTMLSelectElement | null)?.value === "demo-chat", null, { timeout: 10_000 });

    await page.getByRole("button", { name: "New chat" }).click();
    await page.waitForFunction(() => location.hash.length > 1);
    const sid = await page.evaluate(() => location.hash.slice(1));
    await page.getByPlaceholder(/Try:/).fill("what is 2 * (3 + 4)?");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".tool").first().getByRole("button", { name: "Approve" }).waitFor({ timeout: 30_000 });
    await shot(page, "5-demo-agent-approval");
    expect((await stack.api.getSession(sid)).agent.name).toBe("demo-chat");
    // An icon of its own, so the browser asks for no /favicon.ico (a 404 from the dev server).
    expect(await page.locator('link[rel="icon"]').getAttribute("href")).toMatch(/^data:/);
    await page.close();
  });

  it("attaches a picture: a thumbnail before sending, the image in the model's request, in the sent message also after a reload", async () => {
    const model = await stack.fake.script([{ text: "A red square." }, { text: "Still red." }]);
    await stack.api.putAgent("vision-chat", { model });
    const png = Buffer.from(await tinyPng(48, [220, 40, 40]));
    const page = await openPage();
    await page.getByLabel("Agent").selectOption("vision-chat");
    await page.getByRole("button", { name: "New chat" }).click();
    await page.waitForFunction(() => location.hash.length > 1);
    const sid = await page.evaluate(() => location.hash.slice(1));

    const [chooser] = await Promise.all([page.waitForEvent("filechooser"), page.getByRole("button", { name: "Attach" }).click()]);
    await chooser.setFiles({ name: "red.png", mimeType: "image/png", buffer: png });
    await imageShown(page, 'form img[alt="red.png"]', 48);
    await page.getByPlaceholder(/Try:/).fill("what colour is this?");
    await shot(page, "6-attached");
    await page.setViewportSize({ width: 375, height: 700 });
    await shot(page, "6-attached-375");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole("button", { name: "Send" }).click();

    await page.waitForFunction(() => document.querySelector("article.assistant > p")?.textContent === "A red square.", null, { timeout: 30_000 });
    await ready(page);
    await imageShown(page, 'article.user img[alt="red.png"]', 48);
    expect(await page.locator("form img").count()).toBe(0);
    expect(await page.locator("article.user > p").allTextContents()).toEqual(["what colour is this?"]);
    const dataUrl = `data:image/png;base64,${png.toString("base64")}`;
    expect((await stack.fake.requests(model)).map(imageUrls)).toEqual([[dataUrl]]);

    // The next message posts the conversation without the earlier message's inline image (the runtime holds it,
    // and the model's next request still has it from there).
    const post = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/v1/chat"));
    await page.getByPlaceholder(/Try:/).fill("and now?");
    await page.getByRole("button", { name: "Send" }).click();
    const sent = (await post).postDataJSON();
    expect(sent.messages.flatMap((m: any) => m.parts.filter((p: any) => p.type === "file"))).toEqual([]);
    await page.waitForFunction(() => document.body.textContent?.includes("Still red."), null, { timeout: 30_000 });
    expect((await stack.fake.requests(model)).map(imageUrls)).toEqual([[dataUrl], [dataUrl]]);
    await ready(page);

    // After a reload the message comes from GET .../messages: the image is the runtime's file, fetched with the key.
    await page.reload();
    await imageShown(page, 'article.user img[alt="red.png"]', 48);
    expect(await page.locator("article.user img").getAttribute("src")).toMatch(new RegExp(`^/v1/sessions/${sid}/files/file_\\w+\\?access_token=`));
    await shot(page, "7-sent-after-reload");
    await page.setViewportSize({ width: 375, height: 700 });
    await shot(page, "7-sent-after-reload-375");
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
