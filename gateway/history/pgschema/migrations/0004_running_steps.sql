-- Steps still running, as SQLite's migrations/0004_running_steps.sql: the
-- daemon settles the steps a stopped daemon left running at each start,
-- which this small index keeps from reading every step.
CREATE INDEX steps_running ON steps(id) WHERE outcome = 'running';
