-- The farm's queue is the job rows themselves (core/src/db/jobs/claim.rs): each job waits in a
-- lane by what it is, and a worker claims the next one by lane weight, then by account in turn.
-- Redis no longer holds a message per job, so nothing is pushed again: `pushed_at` goes.
alter table file_jobs add column lane text not null default 'interactive'
    check (lane in ('system', 'interactive', 'bulk'));
update file_jobs set lane = 'system' where job_type in ('readMetadata', 'videoThumbnail');
update file_jobs set lane = 'bulk'
    where lane = 'interactive'
      and (job_type in ('zip', 'unzip') or source_folder_id is not null or cardinality(input_ids) > 10);
alter table file_jobs alter column lane drop default;
alter table file_jobs drop column pushed_at;

-- What a claim reads: each lane's waiting jobs by account, oldest first; and who runs what.
create index file_jobs_waiting on file_jobs (lane, user_id, created_at, id) where state = 'queued';
create index file_jobs_running on file_jobs (user_id) where state = 'running';

-- When each account was last served in each lane: accounts take turns, the one served longest
-- ago first.
create table farm_turns (
    lane text not null,
    user_id uuid not null references users (id) on delete cascade,
    served_at timestamptz not null,
    primary key (lane, user_id)
);

-- The drive's own work is capped per account too: past `DRIVE_MAX_QUEUED_READINGS` metadata
-- readings waiting, a new file's reading waits here instead (its metadata still `pending`), and
-- the workers queue it once the account's readings drain (`jobs::queue_deferred_readings`).
-- A flood of arrivals cannot grow the queue without bound.
create table deferred_readings (
    file_id uuid primary key references files (id) on delete cascade,
    user_id uuid not null references users (id) on delete cascade,
    deferred_at timestamptz not null default now()
);
create index deferred_readings_by_user on deferred_readings (user_id, deferred_at, file_id);
