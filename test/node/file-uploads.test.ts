// Refused uploads under `wrangler dev`, over a raw keep-alive connection: a chunked body over the file limit
// (FILES_MAX_BYTES is 1000 bytes here) or of a type not accepted is answered as a whole response, and the same
// connection then serves the client's next request.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevRuntime, startRuntime } from "./support/wrangler-dev";

const KEY = "uploads-test-key";
let rt: DevRuntime;

beforeAll(async () => {
  rt = await startRuntime({ API_KEYS: KEY, FILES_MAX_BYTES: "1000" });
}, 90_000);
afterAll(() => rt?.stop());

/** Reads one HTTP/1.1 response (a content-length or chunked body) from the socket's data. */
function nextResponse(socket: Socket, buffered: { data: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const parse = () => {
      const end = buffered.data.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const head = buffered.data.slice(0, end);
      const status = Number(head.split(" ")[1]);
      const rest = buffered.data.slice(end + 4);
      const length = /content-length: (\d+)/i.exec(head);
      if (length) {
        if (rest.length < Number(length[1])) return false;
        buffered.data = rest.slice(Number(length[1]));
        resolve({ status, body: rest.slice(0, Number(length[1])) });
        return true;
      }
      const last = rest.indexOf("0\r\n\r\n");
      if (!/transfer-encoding: chunked/i.test(head) || last < 0) return false;
      buffered.data = rest.slice(last + 5);
      resolve({ status, body: rest.slice(0, last).replace(/(^|\r\n)[0-9a-f]+\r\n/g, "") });
      return true;
    };
    if (parse()) return;
    const onData = (d: Buffer) => {
      buffered.data += String(d);
      if (parse()) cleanup();
    };
    const onClose = () => {
      cleanup();
      reject(new Error(`the connection closed before a whole response (${JSON.stringify(buffered.data.slice(0, 200))})`));
    };
    const cleanup = () => {
      socket.off("data", onData);
      socket.off("close", onClose);
    };
    socket.on("data", onData);
    socket.on("close", onClose);
  });
}

describe("refused uploads", () => {
  it("answers a chunked upload over FILES_MAX_BYTES or of a refused type with a whole 4xx and keeps the connection for the next request", async () => {
    const { body: session } = await rt.call("POST", "/v1/sessions", { agent: { name: "uploads", model: "demo:fast" } });
    const url = new URL(rt.base);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise((r) => socket.once("connect", r));
    const buffered = { data: "" };
    const chunk = "x".repeat(500);
    const chunks = Array.from({ length: 3 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join("");
    const refusedUpload = async (contentType: string, halves: string[]) => {
      // The first half, then the rest a moment later, as a slow client sends it.
      socket.write(
        `POST /v1/sessions/${session.session_id}/files HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${KEY}\r\n` +
          `content-type: ${contentType}\r\ntransfer-encoding: chunked\r\n\r\n${halves[0]}`,
      );
      await new Promise((r) => setTimeout(r, 300));
      socket.write(`${halves[1]}0\r\n\r\n`);
      const res = await nextResponse(socket, buffered);
      return { status: res.status, message: JSON.parse(res.body).error.message as string };
    };
    // Past the limit with the first half.
    expect(await refusedUpload("text/plain", [chunks, chunks])).toEqual({ status: 413, message: expect.stringMatching(/FILES_MAX_BYTES/) });
    expect(await refusedUpload("application/zip", ["1\r\nx\r\n", "1\r\ny\r\n"])).toEqual({ status: 415, message: expect.stringMatching(/FILES_MEDIA_TYPES/) });

    socket.write(`GET /v1/sessions/${session.session_id}/files HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${KEY}\r\n\r\n`);
    const next = await nextResponse(socket, buffered);
    expect(next.status).toBe(200);
    expect(JSON.parse(next.body).files).toEqual([]);
    socket.destroy();
  });
});
