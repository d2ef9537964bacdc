// What turn execution (turn-runner.ts) uses of the session object: the members of its context and the store
// methods it calls, with those of the parts it makes (the setups, the replays, the loop's ports).

import type { SessionSlice } from "../context";
import type { ReplaySession } from "../replays/replay-turns";
import type { PortsSession } from "./turn-ports";
import type { SetupSession } from "./turn-setup";

/** Its commit and settings; the turns, their checkpoints, inbox and history; the heartbeat and debounce entries. */
export type RunnerSession = SetupSession &
  ReplaySession &
  PortsSession &
  SessionSlice<
    "agent" | "armAlarm" | "bindings" | "commit" | "policy" | "row" | "transact" | "view",
    | "appendHistory"
    | "clearInbox"
    | "decisions"
    | "deleteTurnState"
    | "eventsOfTurn"
    | "history"
    | "inbox"
    | "queuedTurns"
    | "removeTurnMessages"
    | "runningTurn"
    | "saveTurnState"
    | "terminalEvent"
    | "timers"
    | "turnMessageCount"
    | "turnState"
  >;
