// The API key lives in this tab's sessionStorage only: never in the address bar, never in localStorage,
// gone when the tab closes. Addresses stay shareable without the key.
import { InspectorClient } from "./api";

const STORAGE_KEY = "agent-runtime.inspector.key";

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: sign in on every load
  }
}

export function storeKey(key: string | null): void {
  try {
    if (key === null) sessionStorage.removeItem(STORAGE_KEY);
    else sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // storage disabled: the key lives only as long as the page
  }
}

/** A client for the runtime that served this page. */
export function clientFor(key: string): InspectorClient {
  // Quick reconnects: a person is watching, and the runtime is usually back within seconds.
  return new InspectorClient({ url: location.origin, key, backoff: { initialMs: 250, maxMs: 3000 } });
}
