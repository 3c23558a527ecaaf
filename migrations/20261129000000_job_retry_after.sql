-- A job released after a server-side failure waits out its backoff before any message may
-- claim it again: a duplicate message (a re-push while its worker looked stale, say) would
-- otherwise run the next attempt at once and spend the job's attempts in a moment.
alter table file_jobs add column run_after timestamptz;
