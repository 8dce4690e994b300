-- The gateway that started each session and task, as SQLite's
-- migrations/0006_gateway.sql: a daemon that starts again on a shared
-- database ends its own last run's open tasks and running steps, never
-- another live gateway's. Rows from before this migration have none ('').

ALTER TABLE sessions ADD COLUMN gateway TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks    ADD COLUMN gateway TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_open_by_gateway ON tasks (gateway) WHERE ended_at IS NULL;
