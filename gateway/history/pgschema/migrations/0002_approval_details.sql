-- What the person was shown when asked, and how they answered, as SQLite's
-- migrations/0002_approval_details.sql: the detected commit kind, the
-- policy rule, the target, the reason for a deny, and whether an allow
-- covers the rest of the task.

ALTER TABLE approvals ADD COLUMN commit_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN rule        TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN target      TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN reason      TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN for_task    BOOLEAN NOT NULL DEFAULT false;
-- Approvals reads a task's approvals in the order they opened.
DROP INDEX approvals_task;
CREATE INDEX approvals_task_created ON approvals(task_id, created_at);
