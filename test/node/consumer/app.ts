// A browser app using the published client, type-checked on its own (strict, DOM lib): its program must not
// contain any server file.
import { RuntimeClient, type RuntimeEvent, turnOutcome } from "agent-runtime/client";

const client = new RuntimeClient({ url: "https://runtime.example", key: "a-browser-token" });

export async function lastOutcome(sessionId: string): Promise<string> {
  const end = await client.submitAndWait(sessionId, "hello", {
    onEvent: (e: RuntimeEvent) => {
      if (e.type === "model.delta") document.title = e.payload.text;
    },
  });
  return turnOutcome(end).status;
}
