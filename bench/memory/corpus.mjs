// The fixed synthetic corpus of bench/memory.mjs's recall by meaning: unit vectors with cluster structure, so
// the exact nearest neighbours are well defined and a quantized index can miss them. Message `i` belongs to
// topic `topicOf(i)` (skewed: the largest topics hold thousands of messages, the smallest a few), and its vector
// is the topic's centre plus a shared direction (embedding models' vectors all lean one way) plus its own noise.
// The worker (seeding the index) and the bench (the exact scan) compute the same numbers from the same seeds.

export const TOPICS = 500;
/** Weights of the shared direction, the topic's centre and the message's own noise. */
const SHARED = 0.5;
const NOISE = 0.9;

/** A seeded stream of standard normal numbers (xorshift32 and Box-Muller). */
function gaussians(seed, n) {
  let x = (Math.imul(seed + 1, 2654435761) ^ 0x9e3779b9) >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) + 0.5) / 4294967296;
  };
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(next()));
    const t = 2 * Math.PI * next();
    out[i] = r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = r * Math.sin(t);
  }
  return out;
}

function unit(v) {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  const k = 1 / Math.sqrt(s);
  for (let i = 0; i < v.length; i++) v[i] *= k;
  return v;
}

const centres = new Map();
function centre(topic, dims) {
  const key = `${topic}:${dims}`;
  let c = centres.get(key);
  if (!c) {
    c = unit(gaussians(1_000_003 + topic, dims));
    centres.set(key, c);
  }
  return c;
}

/** The topic of message `i` (seeded, skewed toward the first topics). */
export function topicOf(i) {
  const u = (Math.imul(i + 7, 2246822519) >>> 0) / 4294967296;
  return Math.floor(TOPICS * u * u * u);
}

/** The unit vector of message `seed` in `topic`: a query is one with a seed no message has (negative). */
export function corpusVector(seed, topic, dims) {
  const shared = centre(-1, dims);
  const c = centre(topic, dims);
  const g = unit(gaussians(seed * 2 + 11, dims));
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) v[i] = SHARED * shared[i] + c[i] + NOISE * g[i];
  return unit(v);
}

/** Query `q`: a new message of the topic of message `q * 7919 % messages`. */
export function queryVector(q, messages, dims) {
  return corpusVector(-1 - q, topicOf((q * 7919) % messages), dims);
}
