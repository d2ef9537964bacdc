// Every operation of the HTTP API, by area; OPERATIONS lists them all (the routes, /openapi.json, the API
// reference and the access test are built from it).
import * as a2a from "./a2a";
import * as a2aRest from "./a2a-rest";
import * as agentVersions from "./agent-versions";
import * as agents from "./agents";
import * as chat from "./chat";
import * as codeTools from "./code-tools";
import * as datasets from "./datasets";
import * as evals from "./evals";
import * as files from "./files";
import type { Operation } from "./operation";
import * as quotas from "./quotas";
import * as resources from "./resources";
import * as responses from "./responses";
import * as schedules from "./schedules";
import * as sessions from "./sessions";
import * as streams from "./streams";
import * as subscriptions from "./subscriptions";
import * as system from "./system";
import * as tokens from "./tokens";
import * as turns from "./turns";
import * as usage from "./usage";

export type { AnswerOf, BodyOf, Operation, QueryOf, ResponseOf } from "./operation";
export {
  a2a,
  a2aRest,
  agents,
  agentVersions,
  chat,
  codeTools,
  datasets,
  evals,
  files,
  quotas,
  resources,
  responses,
  schedules,
  sessions,
  streams,
  subscriptions,
  system,
  tokens,
  turns,
  usage,
};

const isOperation = (v: unknown): v is Operation => typeof v === "object" && v !== null && "operationId" in v && "permission" in v;

const METHOD_ORDER = ["get", "put", "post", "patch", "delete"];

/** Every declared operation, by path and then method (an area's exports come in no order of their own). */
export const OPERATIONS: readonly Operation[] = [
  system,
  agents,
  agentVersions,
  codeTools,
  sessions,
  files,
  turns,
  streams,
  schedules,
  subscriptions,
  chat,
  tokens,
  usage,
  quotas,
  datasets,
  evals,
  resources,
  responses,
  a2a,
  a2aRest,
]
  .flatMap((area) => Object.values(area).filter(isOperation))
  .sort((a, b) => (a.path === b.path ? METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method) : a.path < b.path ? -1 : 1));
