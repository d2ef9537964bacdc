// The inspector's addresses: /inspect (sessions), /inspect/sessions/<sid> (one session),
// /inspect/resources/<rid>[/agents/<agent>] (a resource's memory, as an agent sees it),
// /inspect/agents/<name>[/versions/<v>] (an agent's versions, labels and traffic), /inspect/evals/<id> (an eval run),
// /inspect/evals/<a>/compare/<b> (two runs compared) and /inspect/code-tools/<name>[/versions/<v>] (a code
// tool's source). The Worker serves the same page for every path under /inspect; this module reads the path
// and moves between them with the History API.
import { useEffect, useState } from "preact/hooks";

export const BASE = "/inspect";

export type Route =
  | { name: "home" }
  | { name: "session"; sid: string }
  | { name: "resource"; rid: string; agent: string | null }
  | { name: "agent"; agent: string; version: number | null }
  | { name: "eval"; id: string }
  | { name: "compare"; a: string; b: string }
  | { name: "code-tool"; tool: string; version: number | null }
  | { name: "missing" };

/** Each address's pattern (its segments URI-encoded) and the route its decoded segments make. */
const ROUTES: [RegExp, (m: (string | undefined)[]) => Route][] = [
  [/^\/sessions\/([^/]+)$/, ([sid]) => ({ name: "session", sid: sid! })],
  [/^\/resources\/([^/]+)(?:\/agents\/([^/]+))?$/, ([rid, agent]) => ({ name: "resource", rid: rid!, agent: agent ?? null })],
  [/^\/agents\/([^/]+)(?:\/versions\/([1-9][0-9]{0,8}))?$/, ([agent, v]) => ({ name: "agent", agent: agent!, version: v ? Number(v) : null })],
  [/^\/evals\/([^/]+)$/, ([id]) => ({ name: "eval", id: id! })],
  [/^\/evals\/([^/]+)\/compare\/([^/]+)$/, ([a, b]) => ({ name: "compare", a: a!, b: b! })],
  [/^\/code-tools\/([^/]+)(?:\/versions\/([1-9][0-9]{0,8}))?$/, ([tool, v]) => ({ name: "code-tool", tool: tool!, version: v ? Number(v) : null })],
];

export function parseRoute(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length).replace(/\/+$/, "") : null;
  if (rest === "") return { name: "home" };
  for (const [pattern, route] of rest === null ? [] : ROUTES) {
    const m = pattern.exec(rest!);
    if (!m) continue;
    try {
      return route(m.slice(1).map((s) => (s === undefined ? s : decodeURIComponent(s))));
    } catch {
      return { name: "missing" };
    }
  }
  return { name: "missing" };
}

export const sessionPath = (sid: string): string => `${BASE}/sessions/${encodeURIComponent(sid)}`;
/** A resource's page; with `agent`, its working memory is that agent's (its scope, schema and template apply). */
export const resourcePath = (rid: string, agent: string | null = null): string =>
  `${BASE}/resources/${encodeURIComponent(rid)}${agent ? `/agents/${encodeURIComponent(agent)}` : ""}`;

/** An agent's versions page, `version` chosen (null: its newest). */
export const agentPath = (agent: string, version: number | null = null): string =>
  `${BASE}/agents/${encodeURIComponent(agent)}${version === null ? "" : `/versions/${version}`}`;
export const evalPath = (id: string): string => `${BASE}/evals/${encodeURIComponent(id)}`;
export const comparePath = (a: string, b: string): string => `${evalPath(a)}/compare/${encodeURIComponent(b)}`;
/** A code tool's source at `version` (null: its latest). */
export const codeToolPath = (tool: string, version: number | null = null): string =>
  `${BASE}/code-tools/${encodeURIComponent(tool)}${version === null ? "" : `/versions/${version}`}`;

export function navigate(path: string): void {
  if (path === location.pathname) return;
  history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** For an <a href>: follows the link inside the page unless the user asked for a new tab or window. */
export function followLink(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.currentTarget as HTMLAnchorElement;
  if (a.origin !== location.origin) return;
  e.preventDefault();
  navigate(a.pathname);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return route;
}
