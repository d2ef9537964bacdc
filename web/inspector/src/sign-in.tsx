// Sign-in: the key is checked against the runtime before it is kept (against the session being opened,
// so a key that may see only that session works too).
import { useState } from "preact/hooks";
import { clientFor } from "./auth";
import { ErrorText, useAction } from "./ui";

export function SignIn({ sid, onSignedIn }: { sid: string | null; onSignedIn(key: string): void }) {
  const [key, setKey] = useState("");
  const action = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return;
    const client = clientFor(k);
    if (await action.run(() => (sid ? client.getSession(sid) : client.listAgents()))) onSignedIn(k);
  };
  return (
    <section class="panel narrow" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      <p>{sid ? `Sign in to open session ${sid}.` : "Sign in with an API key of this runtime."}</p>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" spellcheck={false} required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <p class="hint">Kept in this tab only (session storage); never put in the address.</p>
        <button type="submit" disabled={action.busy}>
          Sign in
        </button>
        <ErrorText error={action.error} />
      </form>
    </section>
  );
}
