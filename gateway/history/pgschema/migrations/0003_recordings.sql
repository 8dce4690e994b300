-- The video of a task's screen, as SQLite's migrations/0003_recordings.sql:
-- one row per task, written and updated by the recorder as the file grows.
-- path is relative to the recordings folder, with forward slashes;
-- started_at is the wall time of the video's time 0.

CREATE TABLE recordings (
	task_id     TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
	path        TEXT NOT NULL,
	codec       TEXT NOT NULL CHECK (codec IN ('h264', 'h265')),
	width       INTEGER NOT NULL DEFAULT 0,
	height      INTEGER NOT NULL DEFAULT 0,
	started_at  BIGINT NOT NULL,
	duration_ms BIGINT NOT NULL DEFAULT 0,
	bytes       BIGINT NOT NULL DEFAULT 0,
	updated_at  BIGINT
);

-- Retention finds the ended tasks by end time, and the orphan sweep looks
-- media files up by path.
CREATE INDEX tasks_ended ON tasks(ended_at) WHERE ended_at IS NOT NULL;
CREATE INDEX media_path ON media(path);
