-- Quorums and deadline outcomes per tool (hitl_tools): how many distinct principals must approve an action,
-- who approved so far (a JSON array, appended by each action.approval.recorded), and what its deadline does.
ALTER TABLE actions ADD COLUMN approvals_required INTEGER NOT NULL DEFAULT 1;
ALTER TABLE actions ADD COLUMN approved_by TEXT;
ALTER TABLE actions ADD COLUMN on_timeout TEXT NOT NULL DEFAULT 'reject';
