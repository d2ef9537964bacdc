// Erasing sessions with the sessions made from them (docs/guides/sessions-at-scale.md): each erased session names its forks
// and replays, which are erased next, one level at a time, so however deep the tree no erase waits on another.
import type { Context } from "hono";
import type { Env } from "../env";
import { errorMessage, unwrap } from "../protocol/errors";
import { type AppEnv, sessionStub } from "./http";

export type Left = { session_id: string; reason: string };

/** Erases `sessionIds` and every session made from them; returns those that could not be erased, each with why. */
export async function eraseSessions(env: Env, sessionIds: string[]): Promise<Left[]> {
  const left: Left[] = [];
  const seen = new Set<string>();
  for (let level = sessionIds; level.length > 0; ) {
    const fresh = [...new Set(level)].filter((sid) => !seen.has(sid));
    for (const sid of fresh) seen.add(sid);
    const outcomes = await Promise.allSettled(fresh.map(async (sid) => unwrap(await sessionStub(env, sid).erase())));
    level = [];
    outcomes.forEach((o, i) => {
      if (o.status === "fulfilled") level.push(...o.value.derived);
      else left.push({ session_id: fresh[i]!, reason: errorMessage(o.reason) });
    });
  }
  return left;
}

/** 204 when everything was erased; otherwise 200 naming what was left, so no caller takes it for done. */
export function erasedAnswer(c: Context<AppEnv>, left: Left[]) {
  return left.length === 0 ? c.body(null, 204) : c.json({ left }, 200);
}
