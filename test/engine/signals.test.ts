// Signals from outside a running turn (approval decisions, live messages) delivered at every await point of a
// tool call, with and without a crash right after the delivery. The store below keeps what a session object
// keeps durably (the log, the last checkpoint, the inbox, recorded decisions); a crash loses the running
// loop and its memory, and a new loop resumes from the checkpoint, as the object does after a restart.
import { describe, expect, it, vi } from "vitest";
import { runTurn, type TurnPorts, type TurnSetup } from "../../src/engine/loop";
import type { InjectedMessage } from "../../src/engine/ports";
import { newTurnState, type RecordedDecision, type TurnState } from "../../src/engine/turn-state";
import { verifyLog } from "../../src/engine/verify-log";
import type { EventDraft, RuntimeEvent } from "../../src/protocol/events";
import { snapshot } from "./support/memory-ports";
import { callTools, defineTool, makeSetup, say, scriptedModel } from "./support/mock-model";

const TURN = "trn_signals";
const BIG = "x".repeat(5_000);

/** Where the watched call (`fetch_big`) awaits: spilling its arguments, running, spilling its result. */
type AwaitPoint = "spill_args" | "execute" | "spill_result";

class DurableStore {
  readonly events: EventDraft[] = [];
  readonly checkpoints: { afterEvents: number; state: TurnState }[] = [];
  readonly inbox: InjectedMessage[] = [];
  readonly decisions = new Map<string, RecordedDecision>();
  readonly runs = new Map<string, number>();
  terminal: EventDraft | null = null;
  suspended = false;
  private ids = 0;
  newId = (prefix: string) => `${prefix}_${++this.ids}`;

  ran(name: string): void {
    this.runs.set(name, (this.runs.get(name) ?? 0) + 1);
  }

  /** The log as stored events (sequence and ids stamped), for the verifier. */
  stamped(): RuntimeEvent[] {
    return this.events.map(
      (e, i) => ({ ...e, sequence: i + 1, event_id: `evt_${i + 1}`, timestamp: 0, schema_version: 1, session_id: "s", thread_id: "t" }) as RuntimeEvent,
    );
  }
}

/** One process's view of the store: once crashed, it writes nothing more and its pending awaits never return. */
function processPorts(store: DurableStore, pause: (point: AwaitPoint | "other_spill") => Promise<void>): { ports: TurnPorts; crash(): void } {
  const controller = new AbortController();
  let dead = false;
  const alive = () => {
    if (dead) throw new Error("the process is gone");
  };
  const checkpoint = (state: TurnState) => store.checkpoints.push({ afterEvents: store.events.length, state: snapshot(state) });
  const ports: TurnPorts = {
    emit: (events, state) => {
      alive();
      store.events.push(...snapshot(events));
      if (state) checkpoint(state);
    },
    finish: (event) => {
      alive();
      store.events.push(snapshot(event));
      store.terminal = event;
    },
    requestApproval: (event, state) => ports.emit([event], state),
    recordLate: (event) => ports.emit([event]),
    suspend: (state) => {
      alive();
      checkpoint(state);
      store.suspended = true;
    },
    readFile: async () => null,
    saveFile: async () => {
      throw new Error("no files here");
    },
    spill: async (content, about) => {
      await pause(
        about.tool_name !== "fetch_big" ? "other_spill" : content.includes(BIG.slice(0, 100)) && content.startsWith("{") ? "spill_args" : "spill_result",
      );
      return store.newId("art");
    },
    injected: (after) => store.inbox.filter((m) => m.seq > after),
    decisions: () => store.decisions,
    handoff: async () => {
      throw new Error("no handoffs here");
    },
    replaceHistory: () => {
      throw new Error("no compaction here");
    },
    runAgent: async () => {
      throw new Error("no agents here");
    },
    listAgents: async () => [],
    now: () => 1_700_000_000_000,
    newId: store.newId,
    signal: controller.signal,
    tool: { session_id: "s", fetch, urlAllowlist: [], workspace: null as never, memory: null as never },
  };
  return {
    ports,
    crash: () => {
      dead = true;
      controller.abort(new Error("crash"));
    },
  };
}

/** The model's script (one model for the whole scenario: a restart does not replay answers it already gave). */
function script() {
  return scriptedModel(
    callTools([
      ["call_deploy", "deploy", { target: "prod" }],
      ["call_big", "fetch_big", { payload: BIG }],
      ["call_quick", "quick", {}],
    ]),
    say("All done."),
  );
}

function setup(store: DurableStore, model: ReturnType<typeof script>, pauseExecute: () => Promise<void>): TurnSetup {
  const fetchBig = defineTool(
    "fetch_big",
    async () => {
      store.ran("fetch_big");
      await pauseExecute();
      return `${BIG}-result`;
    },
    { idempotent: false },
  );
  const quick = defineTool("quick", async () => {
    store.ran("quick");
    return "quick result";
  });
  const deploy = defineTool(
    "deploy",
    async () => {
      store.ran("deploy");
      return "deployed";
    },
    { idempotent: false, parallel_safe: false },
  );
  return makeSetup({ model, tools: [fetchBig, quick, deploy], config: { hitl_tools: ["deploy"], budget: { max_tool_result_bytes: 1_000 } } });
}

const never = () => new Promise<void>(() => {});

async function scenario(point: AwaitPoint, crash: boolean) {
  const store = new DurableStore();
  let atPoint = false;
  let first: ReturnType<typeof processPorts>;
  const deliver = async (here: AwaitPoint | "other_spill") => {
    if (here !== point || atPoint) return;
    atPoint = true;
    const action = store.events.find((e) => e.type === "action.required")!;
    // As the session object records a decision: its action.resolved event, which the loop then reads.
    store.events.push({
      type: "action.resolved",
      turn_id: TURN,
      action_id: action.action_id,
      tool_call_id: action.tool_call_id,
      payload: { decision: "approved", tool_name: "deploy", by: "test", reason: null },
    });
    store.decisions.set(action.action_id!, { status: "approved", reason: null });
    store.inbox.push({ seq: 1, message_id: "msg_late", content: "Also say which target." });
    if (crash) {
      first.crash();
      return never();
    }
  };
  const model = script();
  first = processPorts(store, deliver);
  const running = runTurn(
    newTurnState(TURN, "Deploy and fetch", 1_700_000_000_000),
    setup(store, model, () => deliver("execute")),
    first.ports,
  );
  if (!crash) {
    await running;
    return store;
  }
  // The dead process's loop stops with the crash's abort (it no longer waits for a non-idempotent call in flight).
  running.catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 20)); // the first process reaches the point and dies there
  expect(atPoint).toBe(true);
  const last = store.checkpoints.at(-1)!;
  const second = processPorts(store, async () => {});
  await runTurn(
    snapshot(last.state),
    setup(store, model, async () => {}),
    second.ports,
    "the process restarted",
  );
  return store;
}

describe("signals at every await point of a tool call", () => {
  for (const point of ["spill_args", "execute", "spill_result"] as const) {
    for (const crash of [false, true]) {
      it(`${point}: a decision and a message delivered there${crash ? ", then a crash" : ""} are applied once, and the log stays sound`, async () => {
        // A crashed process cannot record a call's late result; the runtime logs that (captured here, not printed).
        const errors = vi.spyOn(console, "error").mockImplementation(() => {});
        const store = await scenario(point, crash);
        const logged = errors.mock.calls.map((c) => c[0]);
        errors.mockRestore();
        expect(logged.filter((m) => m !== "recording the late result of a tool call failed")).toEqual([]);
        expect(verifyLog(store.stamped())).toEqual([]);
        expect(store.terminal).toMatchObject({ type: "turn.completed", payload: { output: "All done." } });
        // The approved call ran once; the watched call at most once (a call cut while running is reported lost,
        // never run again); the message entered the conversation once.
        expect(store.runs.get("deploy")).toBe(1);
        expect(store.runs.get("fetch_big") ?? 0).toBe(1);
        expect(store.events.filter((e) => e.type === "message.injected").map((e) => (e.payload as { message_id: string }).message_id)).toEqual(["msg_late"]);
        expect(store.events.filter((e) => e.type === "action.resolved")).toHaveLength(1); // the loop never resolves it again
        const results = store.events.filter((e) => e.type === "tool.result");
        expect(results.map((e) => e.tool_call_id).sort()).toEqual(["call_big", "call_deploy", "call_quick"]);
        const big = results.find((e) => e.tool_call_id === "call_big")!.payload as { output: unknown; is_error: boolean };
        if (crash && point !== "spill_args") expect(big).toMatchObject({ is_error: true, output: { category: "lost" } });
        else expect(big.is_error).toBe(false);
        // No checkpoint ever holds a started call whose tool.started is not in the log before it.
        for (const { afterEvents, state } of store.checkpoints) {
          const startedInLog = new Set(store.events.slice(0, afterEvents).flatMap((e) => (e.type === "tool.started" ? [e.tool_call_id] : [])));
          for (const call of state.calls ?? []) if (call.status === "started") expect(startedInLog.has(call.tool_call_id)).toBe(true);
        }
      });
    }
  }
});
