// A session's data as a whole: erase it (DELETE /v1/sessions/:sid) or export it
// (GET /v1/sessions/:sid/export, the log as JSON lines, streamed page by page).

import type { Env } from "../env";
import { indexShard } from "../objects/index/index-shards";
import { parseCursor } from "../protocol/cursor";
import { ApiError, unwrap } from "../protocol/errors";
import { sessions as ops } from "../protocol/operations";
import type { FileInfo } from "../protocol/operations/files";
import type { EventsPageBody } from "../protocol/operations/streams";
import { parseJson } from "../protocol/session-operations";
import type { FilePage } from "../session/files/file-ledger";
import { erasedAnswer, eraseSessions } from "./erasure";
import { sessionFiles } from "./files";
import { callSession, router, sessionStub } from "./http";
import { route } from "./operation-route";

const PAGE = 1000;
const encoder = new TextEncoder();

/** Every file of the session, page by page. */
async function allFiles(env: Env, sid: string): Promise<FileInfo[]> {
  const ledger = sessionFiles(env, sid);
  const files: FileInfo[] = [];
  let after: [number, string] | null = null;
  do {
    const page: FilePage = await ledger.page({ after, limit: PAGE });
    files.push(...page.files);
    after = page.next;
  } while (after);
  return files;
}

export const sessionData = router()
  .openapi(route(ops.eraseSession), async (c) => {
    const { sid } = c.req.valid("param");
    const { erased, derived } = unwrap(await sessionStub(c.env, sid).erase());
    if (!erased && !(await indexShard(c.env, sid).isErased(sid))) throw ApiError.notFound("Session", sid);
    return erasedAnswer(c, await eraseSessions(c.env, derived));
  })
  .openapi(route(ops.exportSession), async (c) => {
    const { sid } = c.req.valid("param");
    const raw = c.req.valid("query").after;
    const after = raw === undefined ? 0 : parseCursor(raw);
    if (after === null) throw ApiError.validation([{ path: "after", reason: "must be a plain non-negative decimal integer" }]);
    const by = c.get("keyHash");
    const header = await callSession(c.env, sid, "exportSession", { by });
    if (after > header.last_sequence) throw ApiError.validation([{ path: "after", reason: `is past the end of the log (${header.last_sequence})` }]);
    const artifacts = `/v1/sessions/${sid}/artifacts/{artifact_id}`;
    // The session's files are listed, not inlined: the log names them by id, their route serves the bytes.
    const files = await allFiles(c.env, sid);
    const fileRoute = `/v1/sessions/${sid}/files/{file_id}`;
    const head = `${JSON.stringify({ type: "session.export", ...header, after, artifact_route: artifacts, file_route: fileRoute, files })}\n`;
    // Written here, a page at a time, rather than pulled: a client that goes away fails a write, which ends the
    // export quietly (a pulled stream's pump failed where nothing could catch it, and workerd printed "Uncaught
    // Error: Network connection lost").
    const out = new IdentityTransformStream();
    const writer = out.writable.getWriter();
    const signal = c.req.raw.signal;
    void (async () => {
      // One page in memory at a time (the header goes out with the first); the stored bodies are sent as they are.
      for (let cursor = after, text = head; !signal.aborted; text = "") {
        let page: EventsPageBody;
        try {
          page = parseJson(await callSession(c.env, sid, "getEvents", { query: { after: cursor, limit: PAGE }, by }));
        } catch (err) {
          console.error("export failed", err);
          break; // the export ends cut short, as an error
        }
        const last = !page.has_more || page.events.length === 0;
        text += page.events.map((e) => `${JSON.stringify(e)}\n`).join("");
        try {
          if (text !== "") await writer.write(encoder.encode(text));
          if (last) return await writer.close();
        } catch {
          return; // the client went away: normal, nothing to report
        }
        cursor = page.next_after;
      }
      await writer.abort().catch(() => {});
    })();
    return new Response(out.readable, { headers: { "content-type": "application/x-ndjson; charset=utf-8" } });
  });
