// The reads the inspector needs beyond the shared client's: an eval run's cases, two runs compared and a code
// tool's version, each built from its operation's declaration like the client's own calls.

import { RuntimeClient } from "../../../src/client/index";
import type { AnswerOf } from "../../../src/protocol/operations";
import * as codeTools from "../../../src/protocol/operations/code-tools";
import * as evals from "../../../src/protocol/operations/evals";

export type EvalCases = AnswerOf<typeof evals.listEvalCases>;
export type EvalComparison = AnswerOf<typeof evals.compareEvalRuns>;
export type CodeTool = AnswerOf<typeof codeTools.getCodeTool>;

export class InspectorClient extends RuntimeClient {
  listEvalCases(id: string): Promise<EvalCases> {
    return this.call(evals.listEvalCases, { params: { id } });
  }

  /** Run `b` against run `a`: per scorer, b's wins, losses and ties over the cases both finished. */
  compareEvalRuns(a: string, b: string): Promise<EvalComparison> {
    return this.call(evals.compareEvalRuns, { body: { a, b } });
  }

  /** A code tool's version (null: its latest). */
  getCodeTool(name: string, version: number | null): Promise<CodeTool> {
    return this.call(codeTools.getCodeTool, { params: { name }, query: { version: version === null ? undefined : String(version) } });
  }
}
