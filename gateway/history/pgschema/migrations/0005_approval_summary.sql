-- What the person approved, in the words the card showed them, as SQLite's
-- migrations/0005_approval_summary.sql. (The card's screenshot is the
-- task's media row "approval-<id>".)

ALTER TABLE approvals ADD COLUMN summary     TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN counterpart TEXT NOT NULL DEFAULT '';
