// The payloads of question.dropped and question.cancel_settled: what became of the question a tool's result asked
// (a remote A2A task's input-required) when the turn ended before anyone answered it (session/remote-cancels).
import { z } from "zod";

const QuestionRef = {
  turn_id: z.string().describe("the turn whose end left the question unanswered"),
  tool_call_id: z.string(),
  name: z.string().describe("the tool whose result asked"),
};

export const QuestionDropped = z
  .object({
    ...QuestionRef,
    message: z.string().describe("what became of it: a remote A2A task cancelled, a cancel retried, or why it could not be"),
    cancel: z
      .enum(["cancelled", "retrying", "abandoned"])
      .optional()
      .describe(
        "cancelled: the remote task is cancelled (or had nothing left to cancel); retrying: the remote agent could not be reached, the cancel is kept and retried (question.cancel_settled follows); abandoned: it will not be cancelled",
      ),
  })
  .describe(
    "a turn ended (cancelled, failed, the session erased) while a question a tool's result asked (a remote A2A task's input-required) waited: after the end's commit, which recorded the cancel to send, the first attempt's outcome",
  );

export const QuestionCancelSettled = z
  .object({
    ...QuestionRef,
    cancel: z.enum(["cancelled", "abandoned"]).describe("cancelled: the remote agent answered the task cancelled (or ended); abandoned: the retries gave up"),
    attempts: z.int().describe("the CancelTask requests sent, the first included"),
    message: z.string(),
  })
  .describe("a cancel that question.dropped said was retried settled: the remote task is cancelled, or the retries gave up (the task may still wait)");
