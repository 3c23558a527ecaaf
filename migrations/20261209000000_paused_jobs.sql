-- A running bulk job may be held still (SIGSTOP) while a job of another lane runs in its slot
-- (worker/src/pauses.rs). The time it stands still is not the job's: `paused_at` marks a pause
-- under way, `paused_seconds` sums the pauses that ended, and a job's `seconds` (its account's
-- minutes) and its time limit leave both out.
alter table file_jobs add column paused_at timestamptz,
                      add column paused_seconds float8 not null default 0;
