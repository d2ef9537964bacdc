// Eval runs (docs/guides/evals.md): a dataset's cases sent to one version of an agent, each as a fresh session,
// each answer scored by the run's scorers; and the scorers' configs, which the API validates before anything runs.
import { z } from "zod";
import { DatasetName } from "./datasets";
import { regexProblem } from "./safe-regex";

const ScorerId = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, "must match ^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
  .optional()
  .describe("the scorer's name in results, aggregates and a gate's min_scores (default: its type)");
const PassAt = z.number().min(0).max(1).optional().describe("the score from which a case passes (default 0.5)");
const Limit = z.number().min(0).max(1e12);

const RegexScorer = z
  .strictObject({
    type: z.literal("regex"),
    id: ScorerId,
    pattern: z.string().min(1).max(2000).describe("matched against the output's text (RE2: no backreferences or lookaround)"),
    flags: z
      .string()
      .regex(/^[imsu]*$/, "must be some of i, m, s, u")
      .optional(),
  })
  .superRefine((s, ctx) => {
    const problem = regexProblem(s.pattern, s.flags ?? "");
    if (problem) ctx.addIssue({ code: "custom", path: ["pattern"], message: problem });
  });

export const ScorerSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("exact"), id: ScorerId, case_sensitive: z.boolean().optional().describe("default true") }),
  z.strictObject({
    type: z.literal("contains"),
    id: ScorerId,
    value: z.string().min(1).max(10_000).optional().describe("the text the output must contain (default: the case's expected text)"),
    case_sensitive: z.boolean().optional().describe("default false"),
  }),
  RegexScorer,
  z.strictObject({
    type: z.literal("json_schema"),
    id: ScorerId,
    schema: z.record(z.string(), z.unknown()).describe("a JSON Schema the output (its JSON value, or its text parsed as JSON) must match"),
  }),
  z.strictObject({
    type: z.literal("tool_called"),
    id: ScorerId,
    name: z.string().min(1).max(200).describe("the tool the turn must have called"),
    args: z.record(z.string(), z.unknown()).optional().describe("arguments one call must have had (each given field equal)"),
  }),
  z.strictObject({ type: z.literal("no_tool_called"), id: ScorerId, name: z.string().min(1).max(200).optional().describe("this tool (default: any tool)") }),
  z.strictObject({ type: z.literal("max_cost_usd"), id: ScorerId, max: Limit.describe("USD the case may cost") }),
  z.strictObject({ type: z.literal("max_latency_ms"), id: ScorerId, max: Limit.describe("ms from submission to the turn's end") }),
  z.strictObject({ type: z.literal("max_steps"), id: ScorerId, max: z.int().min(0).max(100_000).describe("model calls of the turn") }),
  z.strictObject({
    type: z.literal("model"),
    id: ScorerId,
    model: z.string().min(1).max(200).describe("the judge: a model string, as an agent's model"),
    rubric: z.string().min(1).max(20_000).describe("what a good answer is; the judge answers a score from 0 to 1 and a reason"),
    pass_at: PassAt,
  }),
  z.strictObject({
    type: z.literal("webhook"),
    id: ScorerId,
    url: z.url().describe("POSTed the case ({input, expected, output, tool_calls, ...}); answers {score, reason}; under TOOL_URL_ALLOWLIST"),
    pass_at: PassAt,
  }),
]);
export type ScorerConfig = z.infer<typeof ScorerSchema>;
export const scorerId = (s: ScorerConfig): string => s.id ?? s.type;

export const Scorers = z
  .array(ScorerSchema)
  .min(1, "must name at least one scorer")
  .max(20)
  .superRefine((list, ctx) => {
    list.forEach((s, i) => {
      if (list.findIndex((o) => scorerId(o) === scorerId(s)) !== i)
        ctx.addIssue({ code: "custom", path: [i, "id"], message: `"${scorerId(s)}" names two scorers: give one an id` });
    });
  });

export const MAX_CONCURRENCY = 8;
const Time = z.union([z.int().min(0), z.string().max(40)]).describe("ISO 8601, or ms since the epoch");
export const RecordedFilter = z.strictObject({
  agent: z.string().min(1).max(200).optional().describe("the agent the recorded sessions run (default: the run's agent)"),
  version: z.int().min(1).max(999_999_999).optional().describe("the version of that agent they run (default: any)"),
  since: Time.optional().describe("turns submitted at or after this time"),
  until: Time.optional().describe("turns submitted at or before this time"),
  limit: z.int().min(1).max(100).describe("the most recorded turns to take, newest first"),
});
export type RecordedFilter = z.infer<typeof RecordedFilter>;

export const EvalRunBody = z
  .strictObject({
    agent: z.string().min(1).max(200).describe("a registered agent's name"),
    version: z.int().min(1).max(999_999_999).optional().describe("the agent's version (default: its newest)"),
    dataset: z
      .strictObject({ name: DatasetName, version: z.int().min(1).max(999_999_999).optional().describe("default: its newest") })
      .optional()
      .describe("the cases: a dataset version's items (or recorded)"),
    recorded: z
      .strictObject({ filter: RecordedFilter })
      .optional()
      .describe("the cases: recorded turns of earlier sessions, each replayed against the version, the recorded answer expected (or dataset)"),
    scorers: Scorers,
    concurrency: z.int().min(1).max(MAX_CONCURRENCY).optional().describe("cases running at once (default 4)"),
  })
  .superRefine((b, ctx) => {
    if (b.dataset === undefined && b.recorded === undefined)
      ctx.addIssue({ code: "custom", path: ["dataset"], message: "give a dataset, or recorded: {filter}" });
    if (b.dataset !== undefined && b.recorded !== undefined)
      ctx.addIssue({ code: "custom", path: ["recorded"], message: "give a dataset or recorded, not both" });
  });
export type EvalRunBody = z.infer<typeof EvalRunBody>;

export const ScoreSchema = z.object({ scorer: z.string(), score: z.number().min(0).max(1), pass: z.boolean(), reason: z.string() }).meta({ id: "EvalScore" });
export type Score = z.infer<typeof ScoreSchema>;

export const EvalCaseSchema = z
  .object({
    index: z.number().describe("the item's position in the dataset version, from 0"),
    status: z.enum(["pending", "running", "done", "cancelled"]).describe("cancelled: the run was cancelled before the case ended (no scores)"),
    session_id: z.string().nullable().describe("the fresh session the case ran in"),
    turn_id: z.string().nullable(),
    input: z.unknown(),
    expected: z.unknown().optional(),
    output: z.unknown().optional(),
    turn_status: z.enum(["completed", "failed", "cancelled"]).optional(),
    error: z.string().optional(),
    scores: z.array(ScoreSchema),
    cost_usd: z.number().nullable().optional().describe("the case's turn"),
    scoring_cost_usd: z.number().optional().describe("its judges' calls"),
    latency_ms: z.number().optional(),
    steps: z.number().optional(),
    tool_calls: z.array(z.object({ name: z.string(), args: z.unknown() })).optional(),
    diff: z.string().optional().describe("the output's text against the expected text, a unified line diff (empty: equal; absent: nothing expected)"),
  })
  .meta({ id: "EvalCase" });
export type EvalCase = z.infer<typeof EvalCaseSchema>;

export const EvalRunStatus = z.enum(["running", "completed", "cancelled"]);

export const AggregateSchema = z.object({ mean: z.number(), pass_rate: z.number(), count: z.number() });
export type Aggregate = z.infer<typeof AggregateSchema>;

export const EvalRunSchema = z
  .object({
    id: z.string(),
    agent: z.string(),
    version: z.number(),
    dataset: z.object({ name: z.string(), version: z.number() }).nullable().describe("null: a run of recorded turns"),
    recorded: RecordedFilter.nullable().optional().describe("the filter that chose the recorded turns a run replayed"),
    scorers: z.array(z.unknown()).describe("the scorers as given (a webhook's URL included)"),
    concurrency: z.number(),
    status: EvalRunStatus,
    progress: z.object({ total: z.number(), done: z.number(), running: z.number() }),
    aggregates: z.record(z.string(), AggregateSchema).describe("per scorer, over the cases done"),
    cost_usd: z.number().nullable().describe("the cases' model cost, and the judges'"),
    mean_latency_ms: z.number().nullable(),
    created_at: z.number(),
    created_by: z.string().nullable(),
    finished_at: z.number().nullable(),
  })
  .meta({ id: "EvalRun" });
export type EvalRun = z.infer<typeof EvalRunSchema>;

export const CompareBody = z.strictObject({ a: z.string().min(1).max(100), b: z.string().min(1).max(100) });
export const ComparisonSchema = z
  .object({
    a: z.string(),
    b: z.string(),
    shared_cases: z.number().describe("cases (dataset items by index) both runs finished"),
    scorers: z
      .record(z.string(), z.object({ win: z.number(), lose: z.number(), tie: z.number(), a_mean: z.number(), b_mean: z.number() }))
      .describe("b against a, per case"),
    cost_ratio: z.number().nullable().describe("b's cost over a's on the shared cases (null: a cost nothing or a cost is unknown)"),
    latency_ratio: z.number().nullable(),
  })
  .meta({ id: "EvalComparison" });
export type Comparison = z.infer<typeof ComparisonSchema>;

/** What a label move may require (PUT /v1/agents/:name/labels/:label): a finished, passing run of the version. */
export const GateRequirement = z.strictObject({
  dataset: DatasetName.describe("the dataset the run must be of"),
  dataset_version: z.int().min(1).max(999_999_999).optional().describe("default: the dataset's newest version"),
  min_scores: z.record(z.string(), z.number().min(0).max(1)).describe("per scorer, the least mean score the run must have"),
  max_cost_ratio: z
    .number()
    .positive()
    .max(1e6)
    .optional()
    .describe("the run's cost over the cost of the newest run of the label's current version on the same dataset version, at most"),
});
export type GateRequirement = z.infer<typeof GateRequirement>;
