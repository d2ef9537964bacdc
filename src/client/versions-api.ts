// The HTTP API's calls about an agent's versions: versions, labels and traffic, moving a session to a version,
// and eval runs of a version (docs/guides/versions.md, docs/guides/evals.md), each built from its operation's
// declaration. HttpApi (http-api.ts) adds the rest of the API on top.
import type { TrafficRoute } from "../protocol/agent-versions";
import type { AnswerOf, BodyOf, QueryOf } from "../protocol/operations";
import * as versions from "../protocol/operations/agent-versions";
import * as evals from "../protocol/operations/evals";
import { HttpTransport } from "./http-transport";
import type { EvalRun } from "./types";

export class VersionsApi extends HttpTransport {
  // ---- versions, labels and traffic (docs/guides/versions.md) ----

  /** The agent's versions, newest first. */
  listAgentVersions(name: string): Promise<AnswerOf<typeof versions.listAgentVersions>> {
    return this.call(versions.listAgentVersions, { params: { name } });
  }

  getAgentVersion(name: string, version: number | string): Promise<AnswerOf<typeof versions.getAgentVersion>> {
    return this.call(versions.getAgentVersion, { params: { name, version: String(version) } });
  }

  /** What changed from `against` (default: the version before) to `version`, path by path. */
  diffAgentVersions(name: string, version: number | string, against?: number): Promise<AnswerOf<typeof versions.diffAgentVersions>> {
    const query = { against: against === undefined ? undefined : String(against) };
    return this.call(versions.diffAgentVersions, { params: { name, version: String(version) }, query });
  }

  listAgentLabels(name: string): Promise<AnswerOf<typeof versions.listAgentLabels>> {
    return this.call(versions.listAgentLabels, { params: { name } });
  }

  /** Points `label` at `version` (a rollback is a move back). */
  putAgentLabel(name: string, label: string, version: number): Promise<AnswerOf<typeof versions.putAgentLabel>> {
    return this.call(versions.putAgentLabel, { params: { name, label }, body: { version } });
  }

  getAgentTraffic(name: string): Promise<AnswerOf<typeof versions.getAgentTraffic>> {
    return this.call(versions.getAgentTraffic, { params: { name } });
  }

  /** Splits new sessions opened by the agent's name between labels by weight (`[]`: its newest version). */
  putAgentTraffic(name: string, routes: TrafficRoute[]): Promise<AnswerOf<typeof versions.putAgentTraffic>> {
    return this.call(versions.putAgentTraffic, { params: { name }, body: { routes } });
  }

  /** Moves a session to another version of its agent (between turns). */
  moveSessionAgent(sessionId: string, version: number): Promise<AnswerOf<typeof versions.moveSessionAgent>> {
    return this.call(versions.moveSessionAgent, { params: { sid: sessionId }, body: { version } });
  }

  // ---- eval runs (docs/guides/evals.md) ----

  /** `POST /v1/evals`: starts an eval run of a dataset against an agent version (docs/guides/evals.md); `getEvalRun` follows it. */
  createEvalRun(body: BodyOf<typeof evals.createEvalRun>): Promise<EvalRun> {
    return this.call(evals.createEvalRun, { body });
  }

  getEvalRun(id: string): Promise<EvalRun> {
    return this.call(evals.getEvalRun, { params: { id } });
  }

  /** `GET /v1/evals`: a page of eval runs, newest first (filters `agent`, `status`; pass `next_cursor` back as `cursor`). */
  listEvalRuns(query: QueryOf<typeof evals.listEvalRuns> = {}): Promise<AnswerOf<typeof evals.listEvalRuns>> {
    return this.call(evals.listEvalRuns, { query });
  }

  /** `POST /v1/evals/:id/cancel`: no case starts any more, running cases are interrupted; 409 once the run has ended. */
  cancelEvalRun(id: string): Promise<EvalRun> {
    return this.call(evals.cancelEvalRun, { params: { id } });
  }

  /** `GET /v1/agents/:name/versions/:v/scores`: the version's online scores per scorer (count, mean, pass rate). */
  versionScores(name: string, version: number | string): Promise<AnswerOf<typeof evals.getVersionScores>> {
    return this.call(evals.getVersionScores, { params: { name, version: String(version) } });
  }
}
