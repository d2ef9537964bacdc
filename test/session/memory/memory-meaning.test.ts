// Recall by meaning among many messages (src/objects/memory/recall-meaning.ts): a resource's index holds
// thousands of messages, more than the in-memory index re-ranks, and automatic recall still finds the one
// message that means what a new session asks, with no word in common; a message of an erased session is never
// returned afterwards; after the objects restart the index is built again (the first search, which starts the
// build, ranks by words only) and finds the message again; from PARTITION_FROM messages it is also partitioned in
// the background, and still finds the message.
import { abortAllDurableObjects, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PARTITION_FROM } from "../../../src/engine/memory/sign-codes";
import { CANDIDATES } from "../../../src/objects/memory/recall-meaning";
import type { RecallEntry } from "../../../src/protocol/memory";
import { api, createAgent, submitTurn, waitForTurnEnd } from "../../support/api";
import { fakeEmbedding } from "../../support/fake-embedding";
import { requests, script, uniqueId } from "../../support/fake-model";

/** The queries' words: "automobile" and "vehicle" mean "car" to the fake embedding model. */
const QUERY = "which automobile some vehicle";
const TARGET = "I drive a red car";
const FILLERS = 3000;

/** The dimension each of a text's words falls in (the fake embedding's 32). */
const dimsOf = (text: string) => new Set(fakeEmbedding(text).flatMap((n, d) => (n > 0 ? [d] : [])));

/** Filler words whose meaning shares no dimension with the query or the target, so every filler is farther. */
function fillerWords(): string[] {
  const taken = new Set([...dimsOf(QUERY), ...dimsOf(TARGET)]);
  const words: string[] = [];
  for (let i = 0; words.length < 60; i++) if (!taken.has([...dimsOf(`zq${i}`)][0]!)) words.push(`zq${i}`);
  return words;
}

/** Filler message `i`: five words of four distinct dimensions or more (farther from the query than the target by sign codes too). */
function filler(i: number, words: string[]): string {
  for (let k = 0; ; k++) {
    const text = Array.from({ length: 5 }, (_, j) => words[(i * 7 + j * 13 + k * 31) % words.length]).join(" ");
    if (dimsOf(text).size >= 4) return text;
  }
}

async function seedFillers(rid: string, count = FILLERS): Promise<void> {
  const memory = env.RESOURCES.get(env.RESOURCES.idFromName(rid));
  const words = fillerWords();
  for (let from = 0; from < count; from += 500) {
    const session = `ses_filler_${from}`;
    await memory.addSession(session);
    const entries: RecallEntry[] = [];
    for (let i = from; i < from + 500; i++) {
      const text = filler(i, words);
      entries.push({ session_id: session, turn_id: `trn_filler_${i}`, role: "user", at: 1_770_000_000_000 + i, text, vector: fakeEmbedding(text) });
    }
    await memory.index(entries);
  }
}

async function open(agent: string, rid: string): Promise<string> {
  const res = await api("POST", "/v1/sessions", { agent, resource_id: rid });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.session_id;
}

/** A turn in a new session of `rid`; the hits its automatic recall recorded. */
async function recalled(agent: string, rid: string, input: string): Promise<any[]> {
  const sid = await open(agent, rid);
  const { turn_id } = await submitTurn(sid, input);
  const log = await waitForTurnEnd(sid, turn_id);
  return log.find((e) => e.type === "memory.recalled").payload.hits;
}

async function indexed(rid: string, q: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await api("GET", `/v1/resources/${rid}/memory/search?q=${encodeURIComponent(q)}`)).body.hits.length > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`"${q}" was never indexed for ${rid}`);
}

/** A resource whose older session said TARGET, among `fillers` messages; an agent with automatic recall by meaning. */
async function targetAmong(prefix: string, fillers: number) {
  const s = uniqueId(prefix);
  const rid = uniqueId("user");
  const agent = `${prefix}-${s.slice(-8)}`;
  await createAgent({
    name: agent,
    model: `openai-compatible:${s}`,
    memory: { recall: { embedding_model: "openai-compatible:fake-embedding", auto: { top_k: 3 } } },
  });
  await script(
    s,
    Array.from({ length: 8 }, () => ({ text: "Noted." })),
  );
  const older = await open(agent, rid);
  const { turn_id } = await submitTurn(older, TARGET);
  await waitForTurnEnd(older, turn_id);
  await indexed(rid, "drive");
  await seedFillers(rid, fillers);
  return { rid, agent, older, turn_id };
}

describe("recall by meaning among many messages", () => {
  it("finds the message that means the query among thousands, never one of an erased session, and again after a restart", async () => {
    expect(FILLERS).toBeGreaterThan(CANDIDATES * 4);
    const { rid, agent, older, turn_id } = await targetAmong("meaning", FILLERS);
    const memory = env.RESOURCES.get(env.RESOURCES.idFromName(rid));

    // No word in common: only the meaning finds it, first among 3,002 messages.
    const hits = await recalled(agent, rid, "which automobile");
    expect(hits[0]).toMatchObject({ session_id: older, turn_id, role: "user", snippet: TARGET });
    expect((await memory.meaningState())?.rows).toBeGreaterThanOrEqual(FILLERS + 2);

    // After a restart the first search starts the build and ranks by words only (none match); later ones find it.
    await abortAllDurableObjects();
    expect(await recalled(agent, rid, "some vehicle")).toEqual([]);
    let again: any[] = [];
    for (let i = 0; i < 10 && !again.some((h) => h.snippet === TARGET); i++) again = await recalled(agent, rid, "some vehicle");
    // (The earlier queries' own messages, indexed since, mean the same and may come first.)
    expect(again).toContainEqual(expect.objectContaining({ session_id: older, turn_id, snippet: TARGET }));

    // Erased: its two messages leave the index at once, and no search returns them again.
    await indexed(rid, "vehicle");
    const memoryNow = env.RESOURCES.get(env.RESOURCES.idFromName(rid));
    const rows = (await memoryNow.meaningState())!.rows;
    expect((await api("DELETE", `/v1/sessions/${older}`)).status).toBe(204);
    expect(await memoryNow.meaningState()).toMatchObject({ rows: rows - 2, ready: true });
    const after = await recalled(agent, rid, "some vehicle");
    expect(after.length).toBeGreaterThan(0);
    expect(after.some((h) => h.session_id === older || h.snippet === TARGET)).toBe(false);
  }, 120_000);

  it("from PARTITION_FROM messages, the partition chosen in the background still finds the message and never an erased one", async () => {
    const { rid, agent, older, turn_id } = await targetAmong("partition", PARTITION_FROM + 500);
    const memory = env.RESOURCES.get(env.RESOURCES.idFromName(rid));
    // The index, built by the first turn's recall, followed the writes; past PARTITION_FROM they started the partition.
    for (let i = 0; i < 600 && !(await memory.meaningState())?.ready; i++) await new Promise((r) => setTimeout(r, 50));
    const state = await memory.meaningState();
    expect(state).toMatchObject({ ready: true });
    expect(state!.partitions).toBeGreaterThan(100);
    const hits = await recalled(agent, rid, "which automobile");
    expect(hits).toContainEqual(expect.objectContaining({ session_id: older, turn_id, role: "user", snippet: TARGET }));

    expect((await api("DELETE", `/v1/sessions/${older}`)).status).toBe(204);
    const after = await recalled(agent, rid, "which automobile");
    expect(after.some((h) => h.session_id === older || h.snippet === TARGET)).toBe(false);
  }, 180_000);

  it("embeds each message once: the input by its turn's automatic recall, whose vector the index takes, the answer at the end; none per step", async () => {
    const s = uniqueId("embed-once");
    const model = `emb-${s.slice(-8)}`;
    const rid = uniqueId("user");
    const agent = `once-${s.slice(-8)}`;
    await createAgent({
      name: agent,
      model: `openai-compatible:${s}`,
      tools: ["calculator"],
      memory: { recall: { embedding_model: `openai-compatible:${model}`, auto: { top_k: 3 } } },
    });
    // Three model steps: two tool calls, then the answer.
    await script(s, [
      { tool_calls: [{ name: "calculator", arguments: { expression: "2+2" } }] },
      { tool_calls: [{ name: "calculator", arguments: { expression: "3+3" } }] },
      { text: "Four and six." },
    ]);
    const sid = await open(agent, rid);
    const { turn_id } = await submitTurn(sid, "add two and two, then three and three");
    const log = await waitForTurnEnd(sid, turn_id);
    expect(log.filter((e) => e.type === "model.requested")).toHaveLength(3);
    await indexed(rid, "Four");
    const calls = (await requests(model)).map((b) => b.input);
    expect(calls).toEqual([["add two and two, then three and three"], ["Four and six."]]);
  }, 60_000);
});
