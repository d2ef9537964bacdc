// Prompt caching: Anthropic requests carry cache breakpoints, OpenAI requests the session's
// prompt_cache_key, and the cached input tokens the provider reports are recorded and priced as cached input
// in cost.recorded and GET /v1/usage; replay's request fingerprint is unchanged by the cache marks.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { resolveModel } from "../../../src/engine/models";
import { indexShard } from "../../../src/objects/index/index-shards";
import { makeSetup, runNewTurn } from "../../engine/support/mock-model";
import { api, events, submitTurn, waitForTurnEnd } from "../../support/api";
import { until } from "../../support/chat-client";
import { baseURL, requests, script, uniqueId } from "../../support/fake-model";

const BREAKPOINT = { type: "ephemeral" };

describe("prompt caching", () => {
  it("marks the tools, the system prompt and the last message of an Anthropic request, and prices cached tokens", async () => {
    const id = uniqueId("cache-claude");
    await script(id, [
      { text: "one", usage: { prompt_tokens: 100, completion_tokens: 5 } },
      { text: "two", usage: { prompt_tokens: 120, completion_tokens: 5, cached_tokens: 100 } },
    ]);
    const agent = { name: `cached-${id.slice(-8)}`, model: `anthropic:${id}`, instructions: "Be brief.", tools: ["calculator", "clock"] };
    expect((await api("PUT", `/v1/agents/${agent.name}`, agent)).status).toBe(201);
    const sid: string = (await api("POST", "/v1/sessions", { agent: agent.name })).body.session_id;
    for (const input of ["hi", "again"]) await waitForTurnEnd(sid, (await submitTurn(sid, input)).turn_id);

    const [first, second] = await requests(id);
    for (const body of [first, second]) {
      expect(body.system).toEqual([{ type: "text", text: "Be brief.", cache_control: BREAKPOINT }]);
      expect(body.tools.map((t: any) => t.cache_control)).toEqual([undefined, BREAKPOINT]);
      // Only the last content block of the last message: the next step's request repeats it unchanged.
      const blocks = body.messages.flatMap((m: any) => m.content);
      expect(blocks.map((b: any) => b.cache_control)).toEqual([...blocks.slice(1).map(() => undefined), BREAKPOINT]);
    }
    expect(second.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"]);

    const costs = (await events(sid)).filter((e) => e.type === "cost.recorded").map((e) => e.payload);
    // 20 uncached input tokens at 1000 USD per million, 100 cached at 100, 5 output at 1000.
    expect(costs[1]).toEqual({
      model: `anthropic:${id}`,
      phase: "executor",
      usage: { input_tokens: 120, cached_input_tokens: 100, output_tokens: 5, total_tokens: 125 },
      cost_usd: expect.closeTo(0.035, 9),
    });
    expect(costs[0].usage).toEqual({ input_tokens: 100, output_tokens: 5, total_tokens: 105 });

    await until(async () => ((await indexShard(env, sid).indexedSession(sid)) as { turns: number } | null)?.turns === 2, "the index row", 10_000);
    const usage = (await api("GET", `/v1/usage?agent=${agent.name}`)).body.rows;
    expect(usage).toEqual([
      expect.objectContaining({ model_calls: 2, input_tokens: 220, cached_input_tokens: 100, output_tokens: 10, cost_usd: expect.closeTo(0.14, 9) }),
    ]);
  });

  it("leaves the request fingerprint as it is: a replay of a cached Anthropic turn answers from the recording", async () => {
    const id = uniqueId("cache-claude");
    await script(id, [{ text: "recorded" }]);
    const res = await api("POST", "/v1/sessions", { agent: { model: `anthropic:${id}`, instructions: "Be brief.", tools: ["clock"] } });
    const sid: string = res.body.session_id;
    const { turn_id } = await submitTurn(sid, "hi");
    await waitForTurnEnd(sid, turn_id);
    const replay = await api("POST", `/v1/sessions/${sid}/turns/${turn_id}/replay`, {});
    expect(replay.status).toBe(201);
    await waitForTurnEnd(replay.body.exec_id, replay.body.turn_id);
    const done = (await events(replay.body.exec_id)).find((e) => e.type === "replay.completed");
    expect(done.payload).toMatchObject({ diverged: null, output_changed: false });
    expect((await requests(id)).length).toBe(1);
  });

  it("sends an OpenAI model the session's prompt_cache_key, and reads its cached tokens", async () => {
    // The test deployment has no OPENAI_API_KEY (its refusal is tested), so the turn runs on the runtime's
    // loop with the openai provider pointed at the fake Chat Completions server.
    const id = uniqueId("cache-gpt");
    await script(id, [{ text: "cached", usage: { prompt_tokens: 50, completion_tokens: 2, cached_tokens: 40 } }]);
    const model = resolveModel(`openai:${id}`, { OPENAI_API_KEY: "test", OPENAI_BASE_URL: baseURL });
    const setup = { ...makeSetup({ model: model as never, config: { model: `openai:${id}` } }), cacheKey: "ses_cache_key" };
    const { ports } = await runNewTurn(setup);
    const [body] = await requests(id);
    expect(body.prompt_cache_key).toBe("ses_cache_key");
    expect(ports.ofType("cost.recorded")[0]!.payload.usage).toEqual({ input_tokens: 50, cached_input_tokens: 40, output_tokens: 2, total_tokens: 52 });
  });
});
