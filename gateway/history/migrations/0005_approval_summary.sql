-- What the person approved, in the words the card showed them: the sentence
-- read from the screen, and who or what the commit went to. (The card's
-- screenshot is the task's media row "approval-<id>".)

ALTER TABLE approvals ADD COLUMN summary     TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN counterpart TEXT NOT NULL DEFAULT '';
