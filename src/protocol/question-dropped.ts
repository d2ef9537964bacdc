// The payload of question.dropped: what a tool did about the question its result asked (a remote A2A task's
// input-required) when the turn ended before anyone answered it (engine/dropped-questions.ts).
import { z } from "zod";

export const QuestionDropped = z
  .object({
    turn_id: z.string().describe("the turn whose end left the question unanswered"),
    tool_call_id: z.string(),
    name: z.string().describe("the tool whose result asked"),
    message: z.string().describe("what the tool did about it: a remote A2A task cancelled, or why it could not be"),
  })
  .describe(
    "a turn ended (cancelled, failed, the session erased) while a question a tool's result asked (a remote A2A task's input-required) waited: the tool was told after the end, as this session-level event records",
  );
