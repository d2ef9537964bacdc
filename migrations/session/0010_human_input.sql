-- Human input beyond approve/reject: an action is a tool approval or a question to the user (ask_user). A
-- question keeps the JSON Schema its answer is checked against, and the answer (JSON) once given, so the loop
-- reads it after a restart as it reads a decision.
ALTER TABLE actions ADD COLUMN kind TEXT NOT NULL DEFAULT 'tool_approval';
ALTER TABLE actions ADD COLUMN response_schema TEXT;
ALTER TABLE actions ADD COLUMN response TEXT;
-- An approval keeps the tool's parameters when its arguments may be edited, and the edited arguments (JSON)
-- when the approver changed them.
ALTER TABLE actions ADD COLUMN args_schema TEXT;
ALTER TABLE actions ADD COLUMN args TEXT;
-- How often an action.reminder is emitted while the action waits (null: never).
ALTER TABLE actions ADD COLUMN remind_after_ms INTEGER;
