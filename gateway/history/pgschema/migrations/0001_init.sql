-- The first schema, as SQLite's migrations/0001_init.sql: times are UTC unix
-- milliseconds; NULL means not set. Empty references are stored as NULL so
-- that foreign keys hold only for the references that are set.

CREATE TABLE devices (
	id         TEXT PRIMARY KEY,
	driver     TEXT NOT NULL DEFAULT '',
	name       TEXT NOT NULL DEFAULT '',
	model      TEXT NOT NULL DEFAULT '',
	platform   TEXT NOT NULL DEFAULT '',
	first_seen BIGINT,
	last_seen  BIGINT
);

CREATE TABLE agents (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL DEFAULT '',
	version    TEXT NOT NULL DEFAULT '',
	first_seen BIGINT,
	last_seen  BIGINT
);

CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	agent_id   TEXT REFERENCES agents(id),
	transport  TEXT NOT NULL DEFAULT '',
	started_at BIGINT,
	ended_at   BIGINT
);

CREATE TABLE tasks (
	id         TEXT PRIMARY KEY,
	session_id TEXT REFERENCES sessions(id),
	agent_id   TEXT REFERENCES agents(id),
	device_id  TEXT REFERENCES devices(id),
	text       TEXT NOT NULL DEFAULT '',
	apps       TEXT NOT NULL DEFAULT '[]', -- a JSON array of strings
	started_at BIGINT,
	ended_at   BIGINT,
	outcome    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX tasks_started ON tasks(started_at);
CREATE INDEX tasks_device_started ON tasks(device_id, started_at);
CREATE INDEX tasks_agent_started ON tasks(agent_id, started_at);
CREATE INDEX tasks_session ON tasks(session_id);
CREATE INDEX tasks_open ON tasks(started_at) WHERE ended_at IS NULL;

CREATE TABLE steps (
	id           TEXT PRIMARY KEY,
	task_id      TEXT NOT NULL REFERENCES tasks(id),
	seq          INTEGER NOT NULL,
	tool         TEXT NOT NULL DEFAULT '',
	args         TEXT NOT NULL DEFAULT '', -- JSON, redacted
	outcome      TEXT NOT NULL DEFAULT '',
	message      TEXT NOT NULL DEFAULT '',
	diff         TEXT NOT NULL DEFAULT '',
	started_at   BIGINT,
	duration_ns  BIGINT NOT NULL DEFAULT 0,
	before_media TEXT NOT NULL DEFAULT '', -- media ids; no foreign key, so
	after_media  TEXT NOT NULL DEFAULT '', -- retention may delete media first
	UNIQUE (task_id, seq)
);

CREATE TABLE approvals (
	id         TEXT PRIMARY KEY,
	task_id    TEXT NOT NULL REFERENCES tasks(id),
	step_id    TEXT REFERENCES steps(id),
	tool       TEXT NOT NULL DEFAULT '',
	args       TEXT NOT NULL DEFAULT '', -- JSON, redacted
	status     TEXT NOT NULL DEFAULT 'pending'
		CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
	created_at BIGINT,
	decided_at BIGINT,
	decided_by TEXT NOT NULL DEFAULT ''
);
CREATE INDEX approvals_task ON approvals(task_id);
CREATE INDEX approvals_pending ON approvals(created_at) WHERE status = 'pending';

CREATE TABLE media (
	id         TEXT PRIMARY KEY,
	task_id    TEXT NOT NULL REFERENCES tasks(id),
	step_id    TEXT REFERENCES steps(id),
	kind       TEXT NOT NULL DEFAULT '',
	path       TEXT NOT NULL,
	width      INTEGER NOT NULL DEFAULT 0,
	height     INTEGER NOT NULL DEFAULT 0,
	bytes      BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT
);
CREATE INDEX media_task ON media(task_id);
CREATE INDEX media_step ON media(step_id);
