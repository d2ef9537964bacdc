// Follows one session: the whole log from sequence 0 through the client's resuming event stream (which
// reconnects, resumes after the last event it handed over and repairs gaps), folded into a SessionModel,
// drawn at most once per animation frame. The thread read model (budget, status) is re-read after changes.
import { useEffect, useMemo, useState } from "preact/hooks";
import { type RuntimeClient, RuntimeError, type ThreadView } from "../../../../src/client/index";
import { SessionModel } from "./model";

export type Connection =
  | { state: "connecting" }
  /** Open, and reading what the log holds beyond what the page has. */
  | { state: "catching-up"; target: number }
  | { state: "live" }
  | { state: "reconnecting"; attempt: number }
  | { state: "failed"; error: RuntimeError | Error };

const THREAD_REFRESH_MS = 700;

export interface SessionStream {
  model: SessionModel;
  connection: Connection;
  thread: ThreadView | null;
  /** Re-reads the thread read model now (after an action of the page). */
  refreshThread(): void;
}

export function useSessionStream(client: RuntimeClient, sid: string): SessionStream {
  const model = useMemo(() => new SessionModel(), [client, sid]);
  const [, setVersion] = useState(0);
  const [connection, setConnection] = useState<Connection>({ state: "connecting" });
  const [thread, setThread] = useState<ThreadView | null>(null);
  const [refresh, setRefresh] = useState<() => void>(() => () => {});

  useEffect(() => {
    const stop = new AbortController();
    let conn: Connection = { state: "connecting" };
    let frame = 0;
    let threadTimer: ReturnType<typeof setTimeout> | undefined;

    const set = (next: Connection) => {
      conn = next;
      setConnection(next);
    };
    const caughtUp = () => {
      if (conn.state === "catching-up" && model.lastSequence >= conn.target) set({ state: "live" });
    };
    const readThread = async (): Promise<ThreadView | null> => {
      try {
        const t = await client.getThread(sid);
        // Reads overlap (a timer's and an action's); an older answer arriving last must not win.
        if (!stop.signal.aborted) setThread((prev) => (prev && prev.last_sequence > t.last_sequence ? prev : t));
        return t;
      } catch {
        return null; // the stream reports what is wrong with the connection
      }
    };
    const scheduleThread = () => {
      threadTimer ??= setTimeout(() => {
        threadTimer = undefined;
        void readThread();
      }, THREAD_REFRESH_MS);
    };
    const draw = () => {
      frame = 0;
      setVersion(model.version);
      caughtUp();
      scheduleThread();
    };
    setRefresh(() => () => void readThread());

    (async () => {
      try {
        const stream = client.events(sid, {
          after: model.lastSequence,
          signal: stop.signal,
          staleAfterMs: 15_000,
          onStatus: (s) => {
            if (s.type === "open") {
              set({ state: "catching-up", target: Number.POSITIVE_INFINITY });
              void readThread().then((t) => {
                if (conn.state !== "catching-up") return;
                set({ state: "catching-up", target: t?.last_sequence ?? model.lastSequence });
                caughtUp();
              });
            } else if (s.type === "retry" || s.type === "closed" || s.type === "stale") {
              set({ state: "reconnecting", attempt: s.type === "retry" ? s.attempt : 0 });
            }
          },
        });
        for await (const e of stream) {
          if (model.apply(e) && !frame) frame = requestAnimationFrame(draw);
        }
      } catch (err) {
        if (!stop.signal.aborted) set({ state: "failed", error: err instanceof Error ? err : new RuntimeError(0, "error", String(err)) });
      }
    })();

    return () => {
      stop.abort();
      cancelAnimationFrame(frame);
      clearTimeout(threadTimer);
    };
  }, [client, sid, model]);

  return { model, connection, thread, refreshThread: refresh };
}
