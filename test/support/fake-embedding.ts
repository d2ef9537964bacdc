// The fake embedding model of the fake OpenAI server (fake-openai.ts), also imported by the tests that seed
// a recall index with the vectors it would give.

/** Words the fake embedding model takes as one meaning, so a test can find a message by meaning with no shared word. */
const FAKE_SYNONYMS: Record<string, string> = { automobile: "car", vehicle: "car", car: "car" };

/** A deterministic embedding: each word's meaning hashed into one of 32 dimensions. */
export function fakeEmbedding(text: string): number[] {
  const v = new Array<number>(32).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const meaning = FAKE_SYNONYMS[word] ?? word;
    let h = 0;
    for (const c of meaning) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % 32]! += 1;
  }
  return v;
}
