// Questions the agent asked with ask_user: the question, its deadline, and a form drawn from its answer's
// schema (schema-form.tsx); the server's refusal (422 naming the path and reason) shows under the form.
import type { RuntimeClient } from "../../../../src/client/index";
import { clock, until } from "../format";
import { ErrorText, Section, useAction } from "../ui";
import { useNow } from "./approvals";
import type { Approval } from "./items";
import { type Schema, SchemaForm } from "./schema-form";

export function Questions({ client, sid, questions }: { client: RuntimeClient; sid: string; questions: Approval[] }) {
  const now = useNow(questions.length > 0);
  if (questions.length === 0) return null;
  return (
    <Section title="Questions for you" id="questions-title" class="approvals">
      <ul>
        {questions.map((q) => (
          <Question key={q.action_id} client={client} sid={sid} question={q} now={now} />
        ))}
      </ul>
    </Section>
  );
}

function Question({ client, sid, question: q, now }: { client: RuntimeClient; sid: string; question: Approval; now: number }) {
  const action = useAction();
  const id = `question-${q.action_id}`;
  return (
    <li class="approval" data-action-id={q.action_id}>
      <p id={`${id}-what`} class="question">
        {q.question ?? "The agent asks for an answer."}
      </p>
      {q.expires_at !== null && (
        <p class="meta">
          Deadline <time dateTime={new Date(q.expires_at).toISOString()}>{clock(q.expires_at)}</time> ({until(q.expires_at, now)})
        </p>
      )}
      <SchemaForm
        schema={(q.response_schema ?? { type: "string" }) as Schema}
        id={id}
        label={q.question ?? "Answer"}
        busy={action.busy}
        onSubmit={(response) => void action.run(() => client.answer(sid, q.action_id, response))}
      />
      <ErrorText error={action.error} />
    </li>
  );
}
