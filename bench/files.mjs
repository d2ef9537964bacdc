#!/usr/bin/env node
// `node bench/files.mjs`: what session files cost. The worker, bundled as for deploy, runs in Miniflare (its
// R2 on local disk), with a zero-latency scripted model (bench/lib/fake-llm.mjs). Measures the upload and
// the download of a BENCH_FILES_MIB (default 10) MiB file (throughput in MiB/s of the whole request), and,
// alternating BENCH_FILES_RUNS (default 7) times, a text turn against the same turn with one image
// (BENCH_FILES_IMAGE_KIB KiB, default 256) attached by file_id: turn time is turn.submitted to
// turn.completed in the log (the runtime's clock). Prints medians as JSON; never an assertion.
import { median, round } from "./lib/client.mjs";
import { idleLog } from "./lib/miniflare.mjs";
import { alternate, report, startWithFakeLlm, turnMs } from "./lib/runs.mjs";

const MIB = Number(process.env.BENCH_FILES_MIB ?? 10);
const RUNS = Number(process.env.BENCH_FILES_RUNS ?? 7);
const IMAGE_KIB = Number(process.env.BENCH_FILES_IMAGE_KIB ?? 256);

/** `size` bytes that pass as a PNG (its signature, then noise, which no compression shrinks). */
function pngLike(size) {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)));
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

const runtime = await startWithFakeLlm({ FILES_MAX_BYTES: String((MIB + 1) * 1024 * 1024) });
const { call, fetch } = runtime;
const session = async () => (await call("POST", "/v1/sessions", { agent: { name: "bench", model: "openai-compatible:loop-s0-c0-d20" } })).session_id;

async function upload(sid, bytes) {
  const res = await fetch(`/v1/sessions/${sid}/files?filename=bench.png`, { method: "POST", headers: { "content-type": "image/png" }, body: bytes });
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${await res.text()}`);
  return res.json();
}

/** MiB/s of uploading and of downloading one MIB MiB file. */
async function transfer() {
  const sid = await session();
  const bytes = pngLike(MIB * 1024 * 1024);
  let t0 = performance.now();
  const { file_id } = await upload(sid, bytes);
  const up = performance.now() - t0;
  t0 = performance.now();
  const got = await (await fetch(`/v1/sessions/${sid}/files/${file_id}`)).arrayBuffer();
  const down = performance.now() - t0;
  if (got.byteLength !== bytes.length) throw new Error("download: wrong size");
  return { upload_mib_s: MIB / (up / 1000), download_mib_s: MIB / (down / 1000) };
}

/** The time of one turn of a new session, with or without one attached image. */
async function turn(image) {
  const sid = await session();
  const input = image
    ? [
        { type: "text", text: "describe it" },
        { type: "file", file_id: (await upload(sid, image)).file_id },
      ]
    : "describe it";
  await call("POST", `/v1/sessions/${sid}/turns`, { input });
  return turnMs(await idleLog(call, sid));
}

const image = pngLike(IMAGE_KIB * 1024);
await report(runtime, async () => {
  const [transfers, text, withImage] = await alternate(
    RUNS,
    transfer,
    () => turn(null),
    () => turn(image),
  );
  return {
    file_mib: MIB,
    runs: RUNS,
    upload_mib_per_s: round(median(transfers.map((t) => t.upload_mib_s))),
    download_mib_per_s: round(median(transfers.map((t) => t.download_mib_s))),
    image_kib: IMAGE_KIB,
    text_turn_ms: round(median(text)),
    image_turn_ms: round(median(withImage)),
    added_ms: round(median(withImage) - median(text)),
    samples: { text, image: withImage },
  };
});
