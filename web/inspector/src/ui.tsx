// Small shared pieces of the inspector's views.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
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

export interface Loaded<T> {
  value: T | null;
  error: string | null;
  /** Reads again (after a change the page made). */
  reload(): void;
}

/** What `load` answers, read again when `deps` change; its error as a sentence. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (v) => {
        if (!live) return;
        setValue(v);
        setError(null);
      },
      (err) => live && setError(describeError(err)),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { value, error, reload: () => setTick((t) => t + 1) };
}

/** A table's header row: a column header per name. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** A one-field form that hands its trimmed, non-empty value to `onGo` (open a session or a run by id). */
export function IdForm({ field, label, button, onGo, name }: { field: string; label: string; button: string; onGo(id: string): void; name?: string }) {
  const [value, setValue] = useState("");
  const submit = (e: Event) => {
    e.preventDefault();
    if (value.trim()) onGo(value.trim());
  };
  return (
    <form class="inline" aria-label={name} onSubmit={submit}>
      <label for={field}>{label}</label>
      <input id={field} required autocomplete="off" spellcheck={false} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      <button type="submit">{button}</button>
    </form>
  );
}
