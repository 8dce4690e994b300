-- Steps still running: an acting call commits its step as running before
-- the action and ends it after. The daemon settles the steps a stopped
-- daemon left running at each start, which this small index keeps from
-- reading every step.
CREATE INDEX steps_running ON steps(id) WHERE outcome = 'running';
