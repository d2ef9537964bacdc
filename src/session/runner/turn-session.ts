// What turn execution (turn-runner.ts) is made with: the seams of the session object it and the parts it makes
// (the setups, the replays, the loop's ports) use.

import type { LogHost, SettingsHost, TimerHost, TurnsHost } from "../hosts";
import type { ReplaySession } from "../replays/replay-turns";
import type { PortsSession } from "./turn-ports";
import type { SetupSession } from "./turn-setup";

/** The log, the turns with their checkpoints, inbox and history, the heartbeat and debounce timers, the settings. */
export type RunnerSession = SetupSession & ReplaySession & PortsSession & LogHost & TurnsHost & TimerHost & SettingsHost;

/** While a turn is active the object re-arms this alarm; it resumes a turn whose executor is gone. */
export const HEARTBEAT_MS = 30_000;
