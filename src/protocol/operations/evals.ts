// Eval runs (docs/guides/evals.md): a dataset version's cases against an agent version, scored; and two runs compared.
import { z } from "zod";
import { AggregateSchema, CompareBody, ComparisonSchema, EvalCaseSchema, EvalRunBody, EvalRunSchema, EvalRunStatus } from "../evals";
import { json, jsonBody, operation } from "./operation";

const Id = z.object({ id: z.string().meta({ example: "evr_0123456789abcdef01234567" }) });

export const createEvalRun = operation({
  method: "post",
  path: "/v1/evals",
  operationId: "createEvalRun",
  summary:
    "Start an eval run: each case of the dataset version runs as a fresh session of the agent version (at most `concurrency` at once), durably; answers at once with the run",
  permission: "agents.write",
  rateLimit: "request",
  body: jsonBody(EvalRunBody),
  responses: { 202: json(EvalRunSchema, "Started") },
  errors: [404, 422],
});

export const getEvalRun = operation({
  method: "get",
  path: "/v1/evals/{id}",
  operationId: "getEvalRun",
  summary: "An eval run: its status, progress, aggregates per scorer (mean score, pass rate), cost and latency",
  permission: "agents.read",
  rateLimit: "request",
  params: Id,
  responses: { 200: json(EvalRunSchema, "The run") },
  errors: [404],
});

export const listEvalCases = operation({
  method: "get",
  path: "/v1/evals/{id}/cases",
  operationId: "listEvalCases",
  summary: "An eval run's cases: each one's session, output, scores with reasons, cost, latency, steps and diff against the expected answer",
  permission: "agents.read",
  rateLimit: "request",
  params: Id,
  responses: { 200: json(z.object({ run_id: z.string(), cases: z.array(EvalCaseSchema) }), "The cases, by dataset index") },
  errors: [404],
});

export const compareEvalRuns = operation({
  method: "post",
  path: "/v1/evals/compare",
  operationId: "compareEvalRuns",
  summary: "Run b against run a over the cases both finished: per scorer wins, losses and ties, and the cost and latency ratios",
  permission: "agents.read",
  rateLimit: "request",
  body: jsonBody(CompareBody),
  responses: { 200: json(ComparisonSchema, "The comparison") },
  errors: [404, 422],
});

export const listEvalRuns = operation({
  method: "get",
  path: "/v1/evals",
  operationId: "listEvalRuns",
  summary:
    "The deployment's eval runs, newest first, each as last reported (a running run's progress after its last case; GET /v1/evals/:id reads it live): filters agent and status; limit 1-100 (default 20); cursor from next_cursor",
  permission: "agents.read",
  rateLimit: "request",
  query: z.object({
    agent: z.string().max(200).optional(),
    status: EvalRunStatus.optional(),
    limit: z.string().optional(),
    cursor: z.string().optional(),
  }),
  responses: {
    200: json(
      z.object({ runs: z.array(EvalRunSchema), next_cursor: z.string().nullable().describe("pass as `cursor` for the next page; null on the last page") }),
      "A page of runs",
    ),
  },
  errors: [422],
});

export const cancelEvalRun = operation({
  method: "post",
  path: "/v1/evals/{id}/cancel",
  operationId: "cancelEvalRun",
  summary:
    "Cancel a running eval run: no case starts any more, the turns of running cases are interrupted (those cases end `cancelled`, unscored), and the run ends `cancelled` with the results of the cases done; 409 when it has already ended",
  permission: "agents.write",
  rateLimit: "request",
  params: Id,
  responses: { 200: json(EvalRunSchema, "The cancelled run") },
  errors: [404, 409],
});

export const getVersionScores = operation({
  method: "get",
  path: "/v1/agents/{name}/versions/{version}/scores",
  operationId: "getVersionScores",
  summary:
    "The version's online scores (its agent's online_scorers over live turns, each recorded as eval.scored): per scorer how many turns were scored, the mean score and the pass rate",
  permission: "agents.read",
  rateLimit: "request",
  params: z.object({ name: z.string().meta({ example: "helper" }), version: z.string().meta({ example: "2" }) }),
  responses: {
    200: json(
      z.object({
        agent: z.string(),
        version: z.number(),
        scorers: z.record(z.string(), AggregateSchema).describe("per scorer id; empty when no turn of the version was scored"),
        last_scored_at: z.number().nullable(),
      }),
      "The scores",
    ),
  },
  errors: [404, 422],
});
