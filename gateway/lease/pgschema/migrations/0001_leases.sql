-- The lease table that several gateways share, next to the history's tables
-- in the same database. Times are UTC unix nanoseconds; NULL means not set.
--
-- lease_phones has a row for every phone the table has heard of, which is
-- never deleted: its fence is the last fencing token given on the phone, so
-- a fence is never given twice, across restarts of every gateway. Every
-- change to a phone's lease locks the phone's row first (SELECT … FOR
-- UPDATE, in device order when there are several), which orders the
-- gateways' changes to one phone.
CREATE TABLE lease_phones (
	device          TEXT PRIMARY KEY,
	fence           BIGINT NOT NULL DEFAULT 0,
	offline_since   BIGINT,
	stopped_session TEXT,
	stopped_task    TEXT
);

-- leases has at most one row per phone: the lease on it.
CREATE TABLE leases (
	device       TEXT PRIMARY KEY REFERENCES lease_phones (device),
	session      TEXT NOT NULL,
	agent        TEXT NOT NULL,
	version      TEXT NOT NULL,
	resume_key   TEXT NOT NULL,
	task_id      TEXT NOT NULL,
	task         TEXT NOT NULL,
	apps         TEXT[] NOT NULL,
	since        BIGINT,
	last_used    BIGINT,
	park_key     TEXT NOT NULL DEFAULT '',
	parked_until BIGINT,
	fence        BIGINT NOT NULL
);

CREATE INDEX leases_by_task ON leases (task_id);
CREATE INDEX leases_by_session ON leases (session);
