-- A job's end POSTed to the link its caller gave (`notifyUrl`), with the caller's
-- `clientMetadata` echoed, signed with the job's own secret (derived from DRIVE_SECRET and the
-- job's id, so nothing of it is stored). The end writes the notice in its transaction; a worker's
-- deliverer leases it, sends it and marks it delivered, or tries again later.
alter table file_jobs
    add column notify_url text,
    add column client_metadata jsonb;

create table job_notices (
    job_id uuid primary key references file_jobs (id) on delete cascade,
    due_at timestamptz not null default now(),
    attempts integer not null default 0,
    held_by uuid,
    last_error text,
    delivered_at timestamptz
);
create index job_notices_due on job_notices (due_at) where delivered_at is null;
