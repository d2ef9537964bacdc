// The inspector's view of code mode (docs/guides/code-mode.md), in Chromium against `wrangler dev` and the
// fake model: a `run_code` call shows the script's source, its console lines and its result or error, with
// the tool calls it made nested under it (in its card and in the turn's waterfall), live and after a reload; a
// code tool's call links to the source of the version that ran. Screenshots go to test-output/inspector/.
import { describe, expect, it } from "vitest";
import { screenshot } from "./harness";
import { live, sendTurn, useStack, waitForTurn } from "./stack";

const stack = useStack();

const SCRIPT = [
  "const a = await tools.calculator({ expression: '6 * 7' });",
  "const b = await tools.calculator({ expression: '2 + 3' });",
  "console.log('got', a, 'and', b);",
  "return { a, b };",
].join("\n");

describe("the inspector's code-mode view", () => {
  it("a run_code call shows its script, console and result, its inner calls under it; a failed script its error", async () => {
    const model = await stack.fake.script([
      { tool_calls: [{ name: "run_code", arguments: { code: SCRIPT } }] },
      { text: "42 and 5." },
      { tool_calls: [{ name: "run_code", arguments: { code: "console.warn('about to fail');\nthrow new Error('no luck');" } }] },
      { text: "It failed." },
    ]);
    await stack.api.putAgent("scripter", { model, tools: ["calculator"], code_mode: true });
    const { session_id: sid } = await stack.api.createSession({ agent: "scripter" });
    const page = await stack.openSession(sid);
    await sendTurn(page, "Compute both with one script.");
    await waitForTurn(page, 0, "completed");

    const turn = page.locator(".turn").first();
    const card = turn.locator('article[data-tool="run_code"]');
    expect(await card.getAttribute("data-status")).toBe("succeeded");
    expect(await card.getByTestId("script-code").textContent()).toBe(SCRIPT);
    expect(await card.getByTestId("script-logs").textContent()).toBe("got 42 and 5");
    expect(JSON.parse((await card.getByTestId("script-outcome").textContent())!)).toEqual({ a: "42", b: "5" });
    // The two calculator calls are inside the script's card (not beside it), in the order the script made them.
    const inner = card.getByRole("region", { name: "Calls made by the script (2)" }).locator("article[data-tool=calculator]");
    expect(await inner.count()).toBe(2);
    expect(await inner.locator(".preview").allTextContents()).toEqual(['args {"expression":"6 * 7"}', "result 42", 'args {"expression":"2 + 3"}', "result 5"]);
    expect(await turn.locator("article[data-tool=calculator]").count()).toBe(2);
    // In the waterfall the inner calls are rows under the script's, one level deeper, not beside it.
    const spans = await turn
      .getByRole("list", { name: /^Waterfall of turn/ })
      .locator("> li[data-kind=tool]")
      .evaluateAll((lis) => lis.map((li) => [li.querySelector(".span-label")!.textContent, Number((li as HTMLElement).dataset.depth)] as const));
    const script = spans.findIndex(([label]) => label === "tool run_code");
    const depth = spans[script]![1];
    expect(spans.slice(script)).toEqual([
      ["tool run_code", depth],
      ["tool calculator", depth + 1],
      ["tool calculator", depth + 1],
    ]);
    await screenshot(page, "40-code-mode");

    await sendTurn(page, "Now fail.");
    await waitForTurn(page, 1, "completed");
    const failed = page.locator(".turn").nth(1).locator('article[data-tool="run_code"]');
    expect(await failed.getByTestId("script-logs").textContent()).toBe("warn: about to fail");
    expect(await failed.getByTestId("script-outcome").textContent()).toMatch(/The script failed: .*no luck/);
    expect(await failed.getByRole("region", { name: /Calls made by the script/ }).count()).toBe(0);

    // A reload folds the log again to the same view.
    await page.reload();
    await live(page);
    await waitForTurn(page, 1, "completed");
    const again = page.locator(".turn").first().locator('article[data-tool="run_code"]');
    expect(await again.getByRole("region", { name: "Calls made by the script (2)" }).locator("article[data-tool=calculator]").count()).toBe(2);
    expect(await again.getByTestId("script-logs").textContent()).toBe("got 42 and 5");
    await screenshot(page, "41-code-mode-reload");
    await page.close();
  });

  it("a code tool's call says it is a code tool and which version ran", async () => {
    const put = async (source: string) => {
      const res = await fetch(`${stack.runtime.base}/v1/code-tools/shout`, {
        method: "PUT",
        headers: { authorization: `Bearer ${stack.runtime.key}`, "content-type": "application/json" },
        body: JSON.stringify({ description: "Shouts", input_schema: { type: "object", properties: { text: { type: "string" } } }, source }),
      });
      expect(res.status).toBeLessThan(300);
      return ((await res.json()) as { version: number }).version;
    };
    await put("export default async ({ text }) => text + '!';\n");
    expect(await put("export default async ({ text }) => text.toUpperCase() + '!';\n")).toBe(2);
    const model = await stack.fake.script([{ tool_calls: [{ name: "shout", arguments: { text: "hi" } }] }, { text: "Shouted." }]);
    await stack.api.putAgent("shouter", { model, tools: ["shout", "calculator"] });
    const { session_id: sid } = await stack.api.createSession({ agent: "shouter" });
    const page = await stack.openSession(sid);
    await sendTurn(page, "Shout hi.");
    await waitForTurn(page, 0, "completed");
    const card = page.locator(".turn").first().locator('article[data-tool="shout"]');
    expect(await card.locator(".badge.code-tool").textContent()).toBe("code tool v2");
    expect(await card.locator(".preview").allTextContents()).toEqual(['args {"text":"hi"}', "result HI!"]);
    await screenshot(page, "42-code-tool");

    // The badge opens the source of the version that ran, with links to the tool's other versions.
    await card.locator(".badge.code-tool").click();
    await page.waitForURL(/\/inspect\/code-tools\/shout\/versions\/2$/);
    const source = page.getByTestId("code-tool-source");
    await source.waitFor();
    expect(await source.textContent()).toBe("export default async ({ text }) => text.toUpperCase() + '!';\n");
    expect(await page.getByTestId("code-tool-version").textContent()).toBe("v2");
    const versions = page.getByRole("navigation", { name: "Versions" }).getByRole("link");
    expect(await versions.allTextContents()).toEqual(["v2 (latest)", "v1"]);
    await screenshot(page, "43-code-tool-source");
    await versions.nth(1).click();
    await page.waitForURL(/\/inspect\/code-tools\/shout\/versions\/1$/);
    await page.getByTestId("code-tool-version").filter({ hasText: "v1" }).waitFor();
    expect(await source.textContent()).toBe("export default async ({ text }) => text + '!';\n");
    await page.close();
  });

  it("no page broke its CSP or threw", () => {
    expect(stack.pageProblems).toEqual([]);
  });
});
