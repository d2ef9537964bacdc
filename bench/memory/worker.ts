// The bench's way into one resource's memory object (bench/memory.mjs): seeding its recall index with many
// ended turns at once (not timed), indexing single turns as sessions do at each turn's end, and searches as the
// recall tool and automatic recall make them; with `dims`, the messages and queries carry vectors of that length
// (recall with an embedding model). Timed from the bench process (the worker's clock does not advance
// while it computes).

import type { Env } from "../../src/env";
import { ResourceMemoryObject, resourceMemory } from "../../src/objects/memory/resource-memory-object";
import type { RecallEntry } from "../../src/protocol/memory";
import { corpusVector, queryVector, topicOf } from "./corpus.mjs";

/** The resource's memory object, with what the bench reads of its index of meaning. */
export class BenchMemoryObject extends ResourceMemoryObject {
  /** The `limit` messages nearest to `vector` by meaning alone (no words), as `<turn_id>:<role>`; null while the index builds. */
  async nearestByMeaning(vector: number[], limit: number, candidates?: number): Promise<string[] | null> {
    const hits = this.meaning.nearest(vector, limit, { where: "1", values: [] }, candidates);
    return hits?.map((h) => `${h.turn_id}:${h.role}`) ?? null;
  }
}

/** Turns per session of the data set (each turn is two messages: the user's and the answer). */
const TURNS_PER_SESSION = 250;
const VOCABULARY = 5000;

/** A deterministic word stream (xorshift), skewed toward common words as text is. */
function words(seed: number, n: number): string[] {
  let x = seed * 2654435761 + 1;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const u = (x >>> 0) / 4294967296;
    out.push(`w${Math.floor(VOCABULARY * u * u * u).toString(36)}`);
  }
  return out;
}

/** Message `m`'s vector (message 2i is turn i's input, 2i + 1 its answer). */
const vector = (m: number, dims: number) => [...corpusVector(m, topicOf(m), dims)];

/** Turn `i` of the data set: a user message of 8-23 words and an answer of 20-59; with `dims`, their vectors too. */
function turnEntries(i: number, dims: number): RecallEntry[] {
  const base = { session_id: `ses_${Math.floor(i / TURNS_PER_SESSION)}`, turn_id: `trn_${i}`, at: 1_770_000_000_000 + i * 1000 };
  const entries: RecallEntry[] = [
    { ...base, role: "user", text: words(i * 2, 8 + (i % 16)).join(" ") },
    { ...base, role: "assistant", text: words(i * 2 + 1, 20 + (i % 40)).join(" ") },
  ];
  return dims > 0 ? entries.map((e, k) => ({ ...e, vector: vector(i * 2 + k, dims) })) : entries;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const q = url.searchParams;
    const num = (name: string, fallback: number) => Number(q.get(name) ?? fallback);
    const stub = resourceMemory(env, q.get("rid") ?? "bench") as unknown as DurableObjectStub<BenchMemoryObject>;
    if (url.pathname === "/healthz") return Response.json({ ok: true });
    if (url.pathname === "/state") return Response.json(await stub.meaningState());
    if (url.pathname === "/meaning") {
      // Query `seed` of the corpus of `messages`, by meaning alone: what recall@10 is measured on.
      const vector = [...queryVector(num("seed", 0), num("messages", 1), num("dims", 1536))];
      return Response.json({ ids: await stub.nearestByMeaning(vector, num("limit", 10), q.has("candidates") ? num("candidates", 0) : undefined) });
    }
    if (url.pathname === "/register") {
      // The sessions of turns from..to, known to the resource (as POST /v1/sessions registers them).
      for (let s = Math.floor(num("from", 0) / TURNS_PER_SESSION); s <= Math.floor((num("to", 1) - 1) / TURNS_PER_SESSION); s++)
        await stub.addSession(`ses_${s}`);
      return Response.json({ ok: true });
    }
    if (url.pathname === "/seed" || url.pathname === "/index") {
      // /seed: turns from..to in one write; /index: one turn, as a session's turn end writes it.
      const from = num("from", 0);
      const to = url.pathname === "/index" ? from + 1 : num("to", from + 500);
      const entries: RecallEntry[] = [];
      for (let i = from; i < to; i++) entries.push(...turnEntries(i, num("dims", 0)));
      await stub.index(entries);
      return Response.json({ messages: entries.length });
    }
    if (url.pathname === "/search") {
      // A query like a user's message: words of turn `seed`'s input (so some match), searched as automatic recall does.
      const query = words(num("seed", 0) * 2, 10).join(" ");
      const dims = num("dims", 0);
      const messages = num("messages", 1);
      const hits = await stub.search(query, num("limit", 5), { except: "ses_none" }, dims > 0 ? [...queryVector(num("seed", 0), messages, dims)] : undefined);
      return Response.json({ hits: hits.length });
    }
    return new Response("not found", { status: 404 });
  },
};
