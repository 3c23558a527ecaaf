-- Pipelines: a job whose settings are steps (job_type 'pipeline'). Each step runs once on all
-- the files it takes, or once per file (a type that takes one): its runs, written when the step
-- begins. What a run makes is kept here in the order made: the output of a step whose outputs
-- become files points at its file (also one of the job's outputs); any other output is an
-- intermediate, an object under the job's keys that is in no library and no quota, removed
-- when the job ends. A job taken up again skips the runs done and the outputs recorded.
create table file_job_runs (
    job_id uuid not null references file_jobs (id) on delete cascade,
    step integer not null check (step >= 0),
    run integer not null check (run >= 0),
    state text not null default 'queued'
        check (state in ('queued', 'running', 'done', 'failed', 'stopped')),
    -- The folder an unzip run made for its entries, once made.
    output_folder_id uuid references folders (id) on delete set null,
    result jsonb,
    error text,
    started_at timestamptz,
    ended_at timestamptz,
    primary key (job_id, step, run)
);

create table file_job_run_outputs (
    -- What the run's next step is given for it (a file's id, or this for an intermediate).
    id uuid not null unique default gen_random_uuid(),
    job_id uuid not null,
    step integer not null,
    run integer not null,
    position integer not null check (position >= 0),
    file_name text not null,
    file_size bigint not null check (file_size >= 0),
    kind text not null,
    mime_type text not null,
    object_key text not null,
    is_file boolean not null,
    file_id uuid references files (id) on delete set null,
    -- An intermediate's object, once queued for removal (the job ended).
    removed_at timestamptz,
    created_at timestamptz not null default now(),
    primary key (job_id, step, run, position),
    foreign key (job_id, step, run) references file_job_runs (job_id, step, run) on delete cascade,
    check (is_file or file_id is null)
);
