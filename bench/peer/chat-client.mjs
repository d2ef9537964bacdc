// One peer turn as `useAgentChat` (agents/chat/react + its WebSocket transport) drives it, without React:
// connect to a fresh agent instance, probe for a stream to resume (the hook does this on connect; the
// agent answers cf_agent_stream_resume_none), then the timed part: one cf_agent_use_chat_request frame
// carrying the UI messages, until the cf_agent_use_chat_response frame for that request with done: true.
// The agent sends that terminal frame only after it has persisted the assistant message.
import { randomUUID } from "node:crypto";
import { Api, now } from "../lib/client.mjs";

const isResumeNone = (probeId) => (s) => s.includes('"type":"cf_agent_stream_resume_none"') && s.includes(probeId);

export function peerClient(base) {
  const api = new Api(base, "");
  const wsBase = base.replace(/^http/, "ws");
  return async (model, maxSteps) => {
    // The path is /agents/<binding in kebab case>/<instance name>; partysocket adds its connection id as _pk.
    const sub = api.subscribeRaw(`${wsBase}/agents/peer-chat/${randomUUID()}?_pk=${randomUUID()}`, false);
    try {
      await sub.opened;
      const probeId = randomUUID().slice(0, 8);
      const idle = sub.waitFor(isResumeNone(probeId));
      sub.ws.send(JSON.stringify({ type: "cf_agent_stream_resume_request", probeId }));
      await idle;
      const id = randomUUID().slice(0, 8);
      const messages = [{ id: randomUUID(), role: "user", parts: [{ type: "text", text: "go" }] }];
      // The body's fields besides messages and trigger reach onChatMessage as options.body (the hook's `body`).
      const body = JSON.stringify({ messages, trigger: "submit-message", model, maxSteps });
      let toolOutputs = 0;
      let frames = 0;
      // The chunk a frame carries is a JSON string inside `body`, so an unescaped "done":true is the frame's own.
      const done = sub.waitFor((s) => {
        if (!s.includes('"type":"cf_agent_use_chat_response"') || !s.includes(`"id":"${id}"`)) return false;
        frames += 1;
        if (s.includes('\\"type\\":\\"tool-output-available\\"')) toolOutputs += 1;
        return s.includes('"done":true');
      });
      const t0 = now();
      sub.ws.send(JSON.stringify({ id, init: { method: "POST", body }, type: "cf_agent_use_chat_request" }));
      const { t, s } = await done;
      const end = JSON.parse(s);
      if (end.error) throw new Error(`peer turn failed: ${end.body}`);
      return { ms: t - t0, frames, tool_outputs: toolOutputs };
    } finally {
      sub.close();
    }
  };
}
