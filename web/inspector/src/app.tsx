// The page: sign in first (the key stays in this tab's sessionStorage), then the route decides the view.
// Signing in keeps the address, so /inspect/sessions/<sid> (or an agent's, eval run's or code tool's page)
// opens afterwards.
import { useMemo, useState } from "preact/hooks";
import { AgentPage } from "./agent-page";
import { clientFor, storedKey, storeKey } from "./auth";
import { CodeToolPage } from "./code-tool-page";
import { EvalComparePage } from "./eval-compare-page";
import { EvalRunPage } from "./eval-run-page";
import { Home } from "./home";
import { ResourcePage } from "./resource-page";
import { BASE, followLink, useRoute } from "./router";
import { SessionPage } from "./session/session-page";
import { SignIn } from "./sign-in";

export function App() {
  const [key, setKey] = useState(storedKey);
  const route = useRoute();
  const client = useMemo(() => (key ? clientFor(key) : null), [key]);
  const signOut = () => {
    storeKey(null);
    setKey(null);
  };
  const signIn = (k: string) => {
    storeKey(k);
    setKey(k);
  };

  return (
    <>
      <header class="topbar">
        <a class="brand" href={BASE} onClick={followLink}>
          Agent runtime <span>inspector</span>
        </a>
        {client && (
          <button type="button" class="quiet" onClick={signOut}>
            Sign out
          </button>
        )}
      </header>
      <main id="main">
        {!client ? (
          <SignIn sid={route.name === "session" ? route.sid : null} onSignedIn={signIn} />
        ) : route.name === "home" ? (
          <Home client={client} />
        ) : route.name === "session" ? (
          <SessionPage key={route.sid} client={client} sid={route.sid} onUnauthorized={signOut} />
        ) : route.name === "resource" ? (
          <ResourcePage key={`${route.rid}/${route.agent}`} client={client} rid={route.rid} agent={route.agent} />
        ) : route.name === "agent" ? (
          <AgentPage key={route.agent} client={client} agent={route.agent} version={route.version} />
        ) : route.name === "eval" ? (
          <EvalRunPage key={route.id} client={client} id={route.id} />
        ) : route.name === "compare" ? (
          <EvalComparePage key={`${route.a}/${route.b}`} client={client} a={route.a} b={route.b} />
        ) : route.name === "code-tool" ? (
          <CodeToolPage key={route.tool} client={client} tool={route.tool} version={route.version} />
        ) : (
          <section class="panel">
            <h1>Not found</h1>
            <p>
              Nothing lives at this address.{" "}
              <a href={BASE} onClick={followLink}>
                Go to the sessions.
              </a>
            </p>
          </section>
        )}
      </main>
    </>
  );
}
