// Small shared pieces of the inspector's views.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { describeError } from "./format";

export interface Action {
  busy: boolean;
  error: string | null;
  /** Runs `fn`, keeping `busy` while it runs and its error (as a sentence) afterwards. */
  run(fn: () => Promise<unknown>): Promise<boolean>;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return {
    busy,
    error,
    async run(fn) {
      setBusy(true);
      setError(null);
      try {
        await fn();
        return true;
      } catch (err) {
        setError(describeError(err));
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}

export function ErrorText({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Section({ title, id, children, class: cls }: { title: string; id: string; children: ComponentChildren; class?: string }) {
  return (
    <section class={`panel ${cls ?? ""}`} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}
