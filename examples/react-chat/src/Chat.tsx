// A stock useChat: DefaultChatTransport pointed at the runtime's /v1/chat, resume on mount, and approvals
// answered with addToolApprovalResponse (sent once every pending one has an answer).
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type DynamicToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { type FormEvent, useMemo, useState } from "react";
import { BASE, interrupt } from "./api";

interface Subagent {
  subagent_id: string;
  title: string;
  status: string;
  text: string;
  tools: { tool_call_id: string; name: string; status: string }[];
}

export function Chat({ apiKey, sid, initial }: { apiKey: string; sid: string; initial: UIMessage[] }) {
  const transport = useMemo(() => new DefaultChatTransport({ api: `${BASE}/v1/chat`, headers: { authorization: `Bearer ${apiKey}` } }), [apiKey]);
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id: sid,
    messages: initial,
    transport,
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState("");
  const busy = status === "submitted" || status === "streaming";

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!input.trim()) return;
    void sendMessage({ text: input });
    setInput("");
  };

  const answer = (id: string, approved: boolean) => addToolApprovalResponse({ id, approved, ...(approved ? {} : { reason: "denied in the page" }) });

  return (
    <section>
      {messages.map((message) => (
        <article key={message.id} className={message.role}>
          {message.parts.map((part, i) => {
            const key = `${message.id}-${i}`;
            if (part.type === "text") return <p key={key}>{part.text}</p>;
            if (part.type === "reasoning") return <blockquote key={key}>Plan: {part.text}</blockquote>;
            if (part.type === "dynamic-tool") return <ToolCard key={key} part={part} message={message} onAnswer={answer} />;
            return null; // step boundaries; data-subagent parts are drawn inside their tool's card
          })}
        </article>
      ))}
      {error && <p className="error">{error.message}</p>}
      <form onSubmit={submit}>
        <input value={input} onChange={(e) => setInput(e.target.value)} placeholder="Try: what is 2 * (3 + 4)?" />
        <button type="submit" disabled={busy}>
          Send
        </button>
        {/* stop() would only disconnect (the stream is resumable): interrupt cancels the turn itself. */}
        <button type="button" disabled={!busy} onClick={() => interrupt(apiKey, sid)}>
          Stop
        </button>
      </form>
    </section>
  );
}

function ToolCard({ part, message, onAnswer }: { part: DynamicToolUIPart; message: UIMessage; onAnswer: (id: string, approved: boolean) => void }) {
  const nested = message.parts.find((p) => p.type === "data-subagent" && p.id === part.toolCallId) as { data: { subagents: Subagent[] } } | undefined;
  return (
    <div className={`tool ${part.state}`}>
      <strong>{part.toolName}</strong> <code>{JSON.stringify(part.input)}</code> <em>{part.state}</em>
      {part.state === "output-available" && <pre>{typeof part.output === "string" ? part.output : JSON.stringify(part.output, null, 2)}</pre>}
      {part.state === "output-error" && <pre className="error">{part.errorText}</pre>}
      {part.state === "approval-requested" && (
        <div>
          <button type="button" onClick={() => onAnswer(part.approval.id, true)}>
            Approve
          </button>
          <button type="button" onClick={() => onAnswer(part.approval.id, false)}>
            Deny
          </button>
        </div>
      )}
      {nested?.data.subagents.map((s) => (
        <div key={s.subagent_id} className="subagent">
          <strong>{s.title}</strong> <em>{s.status}</em>
          <p>{s.text}</p>
          {s.tools.map((t) => (
            <div key={t.tool_call_id}>
              {t.name}: {t.status}
            </div>
          ))}
        </div>
      ))}
    </div>
  );
}
