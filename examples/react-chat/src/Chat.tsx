// A stock useChat: DefaultChatTransport pointed at the runtime's /v1/chat, resume on mount, approvals
// answered with addToolApprovalResponse (sent once every pending one has an answer), and attached files sent
// as the user message's file parts.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type DynamicToolUIPart, type FileUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";
import { useMemo } from "react";
import { BASE, fileSrc, interrupt } from "./api";
import { Composer } from "./Composer";
import { FileView } from "./FileView";

interface Subagent {
  subagent_id: string;
  title: string;
  status: string;
  text: string;
  tools: { tool_call_id: string; name: string; status: string }[];
}

export function Chat({ apiKey, sid, initial }: { apiKey: string; sid: string; initial: UIMessage[] }) {
  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: `${BASE}/v1/chat`,
        headers: { authorization: `Bearer ${apiKey}` },
        // useChat posts the whole conversation, and the runtime reads only its last message (and the one whose
        // approvals it answers): earlier messages go without their files, so inline images are sent once, and
        // a chat with pictures stays under the runtime's 1 MiB request limit.
        prepareSendMessagesRequest: ({ body, id, messages, trigger, messageId }) => ({
          body: { ...body, id, trigger, messageId, messages: messages.map((m, i) => (i === messages.length - 1 ? m : withoutFiles(m))) },
        }),
      }),
    [apiKey],
  );
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id: sid,
    messages: initial,
    transport,
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const busy = status === "submitted" || status === "streaming";

  // Files only (no text) are a message too.
  const send = (text: string, files: FileUIPart[]) => void sendMessage(text.trim() ? { text, files } : { files });

  const answer = (id: string, approved: boolean) => addToolApprovalResponse({ id, approved, ...(approved ? {} : { reason: "denied in the page" }) });

  return (
    <section>
      {messages.map((message) => (
        <article key={message.id} className={message.role}>
          {message.parts.map((part, i) => {
            const key = `${message.id}-${i}`;
            if (part.type === "text") return <p key={key}>{part.text}</p>;
            if (part.type === "file") return <FileView key={key} part={part} src={fileSrc(apiKey, part.url)} />;
            if (part.type === "reasoning") return <blockquote key={key}>Plan: {part.text}</blockquote>;
            if (part.type === "dynamic-tool") return <ToolCard key={key} part={part} message={message} onAnswer={answer} />;
            return null; // step boundaries; data-subagent parts are drawn inside their tool's card
          })}
        </article>
      ))}
      {error && <p className="error">{error.message}</p>}
      <Composer busy={busy} onSend={send} onStop={() => void interrupt(apiKey, sid)} />
    </section>
  );
}

const withoutFiles = (message: UIMessage): UIMessage => ({ ...message, parts: message.parts.filter((p) => p.type !== "file") });

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
