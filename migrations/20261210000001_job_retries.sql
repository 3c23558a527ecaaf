-- A job asked with an idempotency key answers the same key again (within 24 hours) with the
-- same job. A failed or stopped job may be tried again (`/retry-file-job`): `seconds_before`
-- keeps what its earlier attempts of a stopped end cost, so a retry never takes back minutes,
-- and `queued_at` is when it joined the queue this time, which its turn and its age go by.
alter table file_jobs
    add column idempotency_key text,
    add column seconds_before double precision not null default 0,
    add column queued_at timestamptz;
update file_jobs set queued_at = created_at;
alter table file_jobs alter column queued_at set not null, alter column queued_at set default now();
create unique index file_jobs_by_idempotency_key on file_jobs (user_id, idempotency_key)
    where idempotency_key is not null;
drop index file_jobs_waiting;
create index file_jobs_waiting on file_jobs (lane, user_id, queued_at, id) where state = 'queued';
