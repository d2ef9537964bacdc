// Gated endpoints of the fake server (Node side): a request to /v1/_gates/<id> is held open until the test
// releases the gate with the answer to give, so a tool call stays in flight for as long as a test needs.
// The gate also says how many held requests their client closed first (an aborted call).
import type { ServerResponse } from "node:http";

interface Gate {
  held: ServerResponse[];
  /** Held requests the client closed before the gate was released. */
  dropped: number;
}

const gates = new Map<string, Gate>();

function gateOf(id: string): Gate {
  let gate = gates.get(id);
  if (!gate) gates.set(id, (gate = { held: [], dropped: 0 }));
  return gate;
}

/** Handles /v1/_gates/<id>[/release|/state]; false for any other path. */
export async function handleGate(res: ServerResponse, path: string, readBody: () => Promise<string>): Promise<boolean> {
  const m = /^\/v1\/_gates\/([^/]+)(\/release|\/state)?$/.exec(path);
  if (!m) return false;
  const gate = gateOf(decodeURIComponent(m[1]!));
  const open = () => gate.held.filter((r) => !r.destroyed && !r.writableEnded);
  if (m[2] === "/release") {
    const answer = await readBody();
    const delivered = open();
    gate.held = [];
    for (const r of delivered) r.writeHead(200, { "content-type": "application/json" }).end(answer);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ delivered: delivered.length, dropped: gate.dropped }));
  } else if (m[2] === "/state") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ held: open().length, dropped: gate.dropped }));
  } else {
    await readBody();
    gate.held.push(res);
    res.once("close", () => {
      if (!res.writableEnded) gate.dropped += 1;
    });
  }
  return true;
}
