// What a browser test file runs against (harness.ts): the fake model, the runtime under `wrangler dev` and
// Chromium, started before the file's tests and stopped after them; and the inspector's page steps the
// files share.
import type { Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import type { RuntimeClient, RuntimeEvent } from "../../src/client/index";
import { launchBrowser, openPage, Runtime, signIn, startFakeModel } from "./harness";

export class Stack {
  fake!: Awaited<ReturnType<typeof startFakeModel>>;
  runtime!: Runtime;
  browser!: Awaited<ReturnType<typeof launchBrowser>>;
  api!: RuntimeClient;
  /** CSP reports and uncaught errors of every page opened with newPage, checked at the end. */
  readonly pageProblems: string[] = [];

  newPage(width?: number, height?: number): Promise<Page> {
    return openPage(this.browser.context, this.pageProblems, width, height);
  }

  signIn(page: Page, path: string): Promise<void> {
    return signIn(page, this.runtime, path);
  }

  /** A new tab signed in to the inspector's page of session `sid`, once its stream is live. */
  async openSession(sid: string, width?: number, height?: number): Promise<Page> {
    const page = await this.newPage(width, height);
    await this.signIn(page, `/inspect/sessions/${sid}`);
    await live(page);
    return page;
  }

  async readLog(sid: string): Promise<RuntimeEvent[]> {
    const log: RuntimeEvent[] = [];
    for await (const e of this.api.readLog(sid)) log.push(e);
    return log;
  }
}

/** Starts the stack before the file's tests and stops it after them; `vars` add to the runtime's environment. */
export function useStack(vars: Record<string, string> = {}): Stack {
  const stack = new Stack();
  beforeAll(async () => {
    stack.fake = await startFakeModel();
    stack.runtime = await Runtime.create(stack.fake.baseUrl, vars);
    await stack.runtime.start();
    stack.api = stack.runtime.client();
    stack.browser = await launchBrowser();
  });
  // Each is guarded: a failed start leaves the later ones unset.
  afterAll(async () => {
    await stack.browser?.close();
    await stack.runtime?.stop();
    await stack.fake?.close();
  });
  return stack;
}

/** The inspector's session stream is connected. */
export const live = (page: Page) => page.locator('[role="status"][data-state="live"]').waitFor({ timeout: 30_000 });

/** The `n`th turn of the page has reached `status`. */
export const waitForTurn = (page: Page, n: number, status: string, timeout = 30_000) =>
  page
    .locator(`.turn >> nth=${n}`)
    .and(page.locator(`[data-status="${status}"]`))
    .waitFor({ timeout });

/** Types `text` into the new-turn box and sends it. */
export async function sendTurn(page: Page, text: string): Promise<void> {
  await page.getByLabel("New turn").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}
