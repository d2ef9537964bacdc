// A tenant's Worker: the agent runtime with one tool written in TypeScript. Agents name `lookup` in their
// `tools` like a built-in; the runtime governs it like one (permission class, approvals, budgets, the log).
import { createRuntime, tool, z } from "agent-runtime";

const GLOSSARY: Record<string, string> = {
  fork: "a new session that starts from an earlier point of another session's log",
  replay: "a recorded turn run again, its tool calls answered from the recording",
  turn: "one input and everything the agent did to answer it",
};

const runtime = createRuntime({
  tools: {
    lookup: {
      tool: tool({
        description: "Looks a word up in the runtime's glossary",
        inputSchema: z.object({ word: z.string().min(1).describe("the word to look up") }),
        execute: async ({ word }) => {
          const meaning = GLOSSARY[word.toLowerCase()];
          return meaning ? { word, meaning } : { word, meaning: null, known: Object.keys(GLOSSARY) };
        },
      }),
      // It reads nothing but this file and changes nothing: any session may use it, and a call a restart cut may run again.
      permission_class: "safe",
      idempotent: true,
    },
  },
});

export default runtime.worker;
export const { SessionObject, RegistryObject, RateLimiter, IndexShardObject, ResourceMemoryObject, QuotaObject, EvalRunObject } = runtime.objects;
export const { CodeToolOutbound } = runtime.entrypoints;
