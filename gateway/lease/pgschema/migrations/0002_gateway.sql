-- The gateway (a daemon's data folder, by its id) that holds each lease: a
-- daemon that starts again ends the leases its last run held, whose agents
-- are gone with it, and never another live gateway's. Leases from before
-- this migration have none ('') and end when they are due.

ALTER TABLE leases ADD COLUMN gateway TEXT NOT NULL DEFAULT '';
CREATE INDEX leases_by_gateway ON leases (gateway);
