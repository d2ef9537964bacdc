// The session's capabilities, listed and connected in one place: each is made with the seams of the object it
// needs (hosts.ts) and the peers it names, and brings its operations, alarm kinds and reactions to commits. The
// list's order is the order of commit reactions; alarm kinds are matched by name.
import { Approvals } from "./approvals/approvals";
import type { Capability } from "./capability";
import { onlineScoring } from "./evals/online-scoring";
import { COPY_DUE } from "./files/file-ledger";
import { DerivedSessions } from "./forks/derived-sessions";
import { forkCapability } from "./forks/fork-history";
import type { SessionHosts } from "./hosts";
import { SessionIndexer } from "./indexer/session-indexer";
import { RecallIndexer } from "./memory/session-memory";
import { operationTable } from "./operations";
import { TurnQueue } from "./queue/turn-queue";
import { quotaContinue } from "./quotas/quota-continue";
import { quotaTurns } from "./quotas/quota-turns";
import { RemoteCancels } from "./remote-cancels/remote-cancels";
import { replayCapability } from "./replays/replay-source";
import { TurnRunner } from "./runner/turn-runner";
import { Schedules } from "./schedules/schedule-table";
import { SOCKETS_DUE } from "./streams/socket-hub";
import { A2aPushConfigs } from "./subscriptions/a2a-push";
import { SubscriptionDelivery } from "./subscriptions/subscription-delivery";
import { SubscriptionTable } from "./subscriptions/subscriptions";
import { versionCapability } from "./versions/session-version";
import { viewsCapability } from "./views/session-views";

export function connect(host: SessionHosts) {
  const cancels = new RemoteCancels(host);
  const runner = new TurnRunner(host, cancels);
  const queue = new TurnQueue(host, runner);
  const approvals = new Approvals(host, () => runner.resume("a decision was recorded"));
  const indexer = new SessionIndexer(host);
  const schedules = new Schedules(host, queue);
  const subscriptions = new SubscriptionTable(host, () => delivery.changed());
  const delivery = new SubscriptionDelivery(host, subscriptions);
  const pushConfigs = new A2aPushConfigs(host, subscriptions);
  /** The session's forks and replays, erased with it. */
  const derived = new DerivedSessions(host.sql);
  const list = [
    queue.capability(),
    approvals.capability(),
    runner.capability(),
    schedules.capability(),
    subscriptions.capability(),
    delivery.capability(),
    indexer.capability(),
    new RecallIndexer(host).capability(),
    forkCapability(host),
    replayCapability(host, runner.replays),
    viewsCapability(host),
    versionCapability(host),
    quotaTurns(host),
    quotaContinue(host),
    onlineScoring(host),
    cancels.capability(),
    // A fork's copies of its source's files, a batch at a time.
    {
      alarms: [
        {
          kind: COPY_DUE,
          fire: async () => {
            if (await host.fileLedger().copyBatch()) host.store.timers.schedule(COPY_DUE, Date.now());
          },
        },
      ],
    },
    // The sockets' own deadlines (a browser token's expiry, keep-alives).
    { alarms: [{ kind: SOCKETS_DUE, fire: (now: number) => host.hub.tick(now) }] },
  ] as const satisfies readonly Capability[];
  return { runner, queue, approvals, indexer, schedules, subscriptions, delivery, pushConfigs, derived, list, operations: operationTable(list) };
}

/** The connected capabilities of a session. */
export type Capabilities = ReturnType<typeof connect>;
/** The session's table of operation handlers, with each handler's own result type. */
export type SessionOperations = Capabilities["operations"];
