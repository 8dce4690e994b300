-- The gateway (a daemon's data folder) that started each session and task,
-- for a history that several gateways share: a daemon that starts again
-- ends its own last run's open tasks and running steps, never another
-- live gateway's. A SQLite file has one gateway, and leaves it empty.

ALTER TABLE sessions ADD COLUMN gateway TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks    ADD COLUMN gateway TEXT NOT NULL DEFAULT '';
