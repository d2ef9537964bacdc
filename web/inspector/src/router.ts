// The inspector's addresses: /inspect (sessions), /inspect/sessions/<sid> (one session) and
// /inspect/resources/<rid>[/agents/<agent>] (a resource's memory, as an agent sees it). The Worker
// serves the same page for every path under /inspect; this module reads the path and moves between them
// with the History API.
import { useEffect, useState } from "preact/hooks";

export const BASE = "/inspect";

export type Route = { name: "home" } | { name: "session"; sid: string } | { name: "resource"; rid: string; agent: string | null } | { name: "missing" };

export function parseRoute(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length).replace(/\/+$/, "") : null;
  if (rest === "") return { name: "home" };
  const m = rest === null ? null : /^\/(?:sessions\/([^/]+)|resources\/([^/]+)(?:\/agents\/([^/]+))?)$/.exec(rest);
  if (m) {
    try {
      if (m[1]) return { name: "session", sid: decodeURIComponent(m[1]) };
      return { name: "resource", rid: decodeURIComponent(m[2]!), agent: m[3] ? decodeURIComponent(m[3]) : null };
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
