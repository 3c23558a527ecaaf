-- File jobs. The row is the job's truth (Redis only carries its id to a worker): state,
-- progress, what it made, and the seconds it cost. `heartbeat_at` is renewed by the worker
-- supervising the job; a running job whose heartbeat stopped is picked up again or failed.
create table file_jobs (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    job_type text not null,
    options jsonb not null,
    input_ids uuid[] not null,
    -- A zip of a folder: the folder whose files it takes.
    source_folder_id uuid references folders (id) on delete set null,
    -- Where results land (null: the top); for unzip, where its new folder goes.
    folder_id uuid references folders (id) on delete set null,
    -- Where results did land, once the worker knows (unzip makes a folder of its own).
    output_folder_id uuid references folders (id) on delete set null,
    state text not null default 'queued'
        check (state in ('queued', 'running', 'done', 'failed', 'stopped')),
    progress real not null default 0,
    error text,
    result jsonb,
    attempts integer not null default 0,
    worker text,
    stop_requested_at timestamptz,
    heartbeat_at timestamptz,
    pushed_at timestamptz not null default now(),
    created_at timestamptz not null default now(),
    started_at timestamptz,
    ended_at timestamptz,
    -- Billable seconds, set when the job ends done or stopped (failed jobs cost nothing).
    seconds double precision
);
create index file_jobs_by_user on file_jobs (user_id, created_at desc, id desc);
create index file_jobs_unfinished on file_jobs (state, heartbeat_at) where state in ('queued', 'running');
create index file_jobs_minutes on file_jobs (user_id, ended_at) where seconds is not null;

-- What a job made, in the order it made them.
create table file_job_outputs (
    job_id uuid not null references file_jobs (id) on delete cascade,
    position integer not null,
    file_id uuid not null references files (id) on delete cascade,
    primary key (job_id, position)
);
