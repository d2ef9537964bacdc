// Settings (the API key), the agent picker, and the chat of the session named in the URL's hash, so a
// reload comes back to the same session: its messages from GET .../messages, a running turn resumed.
import type { UIMessage } from "ai";
import { useEffect, useState } from "react";
import { createDemoAgent, DEMO_AGENT, listAgents, loadMessages, openSession } from "./api";
import { Chat } from "./Chat";

export function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem("runtime-key") ?? "");
  const [agents, setAgents] = useState<string[]>([]);
  const [agent, setAgent] = useState("");
  const [sid, setSid] = useState(() => location.hash.slice(1));
  const [problem, setProblem] = useState("");

  const refresh = () =>
    listAgents(key)
      .then(({ agents }) => {
        setAgents(agents.map((a) => a.name));
        setAgent((current) => current || agents[0]?.name || "");
        setProblem("");
      })
      .catch((err: Error) => setProblem(err.message));

  // biome-ignore lint/correctness/useExhaustiveDependencies: the list is reloaded when the key changes only
  useEffect(() => {
    sessionStorage.setItem("runtime-key", key);
    if (key) void refresh();
  }, [key]);

  // The picker moves to the agent just added, so "New chat" uses it rather than one chosen before.
  const addDemoAgent = () =>
    createDemoAgent(key)
      .then(refresh)
      .then(
        () => setAgent(DEMO_AGENT),
        (err: Error) => setProblem(err.message),
      );

  const newChat = async () => {
    try {
      const { session_id } = await openSession(key, agent);
      location.hash = session_id;
      setSid(session_id);
    } catch (err) {
      setProblem((err as Error).message);
    }
  };

  return (
    <main>
      <header>
        <label>
          API key <input type="password" value={key} onChange={(e) => setKey(e.target.value)} placeholder="from .dev.vars" />
        </label>
        <label>
          Agent{" "}
          <select value={agent} onChange={(e) => setAgent(e.target.value)}>
            {agents.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <button type="button" disabled={!agent} onClick={newChat}>
          New chat
        </button>
        <button type="button" disabled={!key} onClick={addDemoAgent}>
          Add the demo agent
        </button>
      </header>
      {problem && <p className="error">{problem}</p>}
      {sid && key ? <Session key={sid} apiKey={key} sid={sid} /> : <p>Pick an agent and start a chat.</p>}
    </main>
  );
}

/** Loads the session's conversation, then mounts useChat with it. */
function Session({ apiKey, sid }: { apiKey: string; sid: string }) {
  const [messages, setMessages] = useState<UIMessage[] | null>(null);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    loadMessages(apiKey, sid).then(setMessages, (err: Error) => setProblem(err.message));
  }, [apiKey, sid]);
  if (problem) return <p className="error">{problem}</p>;
  return messages ? <Chat apiKey={apiKey} sid={sid} initial={messages} /> : <p>Loading…</p>;
}
