// Every JSON answer ends with a newline, so `curl` leaves the shell's prompt on a line of its own. One place
// for all routes (c.json, c.body with a JSON type, errors, not-found), after the handler has answered.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./http";

const NEWLINE = 0x0a;

export const jsonNewline: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const res = c.res;
  // A response that states its length carries stored bytes as they are (an artifact), never a rendered answer.
  if (!res.body || !/^application\/json\b/.test(res.headers.get("content-type") ?? "") || res.headers.has("content-length")) return;
  const bytes = new Uint8Array(await res.arrayBuffer());
  let ended = bytes;
  if (bytes.at(-1) !== NEWLINE) {
    ended = new Uint8Array(bytes.length + 1);
    ended.set(bytes);
    ended[bytes.length] = NEWLINE;
  }
  c.res = new Response(ended, res);
};
