// Eval runs (docs/guides/evals.md): a dataset version's cases against an agent version, scored; and two runs compared.
import { z } from "zod";
import { CompareBody, ComparisonSchema, EvalCaseSchema, EvalRunBody, EvalRunSchema } from "../evals";
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
