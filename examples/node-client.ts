// A turn from Node 20 with the TypeScript client, run from this repository:
//
//   AGENT_RUNTIME_URL=http://127.0.0.1:8787 KEY=<key> node --experimental-websocket --import tsx examples/node-client.ts "what is 6 * 7?"
//
// Node 20 has a global WebSocket only with --experimental-websocket (Node 22 has it by default); tsx runs the
// client's TypeScript as it is. It opens a session of an inline demo agent, prints the answer as it streams,
// approves nothing (the agent has no approvals) and exits with the turn's status.
import { RuntimeClient, turnOutcome } from "agent-runtime/client";

const client = new RuntimeClient({ url: process.env.AGENT_RUNTIME_URL ?? "http://127.0.0.1:8787", key: process.env.KEY ?? "" });
const { session_id } = await client.createSession({ agent: { name: "node-example", model: "demo:fast", tools: ["calculator"] } });
const end = await client.submitAndWait(session_id, process.argv[2] ?? "what is 6 * 7?", {
  onEvent: (e) => {
    if (e.type === "model.delta" && !e.depth) process.stdout.write(e.payload.text);
  },
});
const outcome = turnOutcome(end);
process.stdout.write(`\n[${outcome.status}]\n`);
process.exitCode = outcome.status === "completed" ? 0 : 1;
