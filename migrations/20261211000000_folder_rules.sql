-- Folder rules: a job (one type, or a pipeline) run on every file that lands in a folder.
-- A file request's `onArrival` is the rule on its folder that names the request; its column
-- and the arrivals' job links become rules and hits.
create table folder_rules (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    folder_id uuid not null references folders (id) on delete cascade,
    -- The template it was made from, shown while it is kept; the rule keeps its own copy.
    template_id uuid references job_templates (id) on delete set null,
    -- The request whose `onArrival` this is.
    request_id uuid unique references file_requests (id) on delete cascade,
    job_type text not null,
    options jsonb not null,
    -- Where its jobs' results land; null: beside the file.
    result_folder_id uuid references folders (id) on delete set null,
    paused boolean not null default false,
    created_at timestamptz not null default now()
);
create index folder_rules_by_folder on folder_rules (folder_id) where not paused;
create index folder_rules_by_user on folder_rules (user_id, created_at);

-- Each file a rule took, once: written in the transaction that brought the file into the
-- rule's folder (or by the rule's backfill), with the job it started. A hit without a job
-- waits for room under the account's cap on queued rule jobs. A removed rule leaves its
-- hits that have a job (a request's room follows them), and takes the others with it.
create table folder_rule_hits (
    id bigserial primary key,
    rule_id uuid references folder_rules (id) on delete set null,
    user_id uuid not null references users (id) on delete cascade,
    file_id uuid not null references files (id) on delete cascade,
    job_id uuid unique references file_jobs (id) on delete set null,
    -- Taken by the backfill, not by an arrival.
    backfill boolean not null default false,
    hit_at timestamptz not null default now(),
    unique (rule_id, file_id)
);
create index folder_rule_hits_waiting on folder_rule_hits (user_id, hit_at) where job_id is null;
create index folder_rule_hits_by_file on folder_rule_hits (file_id);

insert into folder_rules (id, user_id, folder_id, request_id, job_type, options, created_at)
select gen_random_uuid(), r.user_id, r.folder_id, r.id, r.on_arrival ->> 'jobType', r.on_arrival -> 'options',
       r.created_at
from file_requests r where r.on_arrival is not null;

insert into folder_rule_hits (rule_id, user_id, file_id, job_id, hit_at)
select fr.id, fr.user_id, a.file_id, a.job_id, a.created_at
from request_arrivals a join folder_rules fr on fr.request_id = a.request_id
where a.file_id is not null and a.job_id is not null;

-- What a request has taken: its arrivals and what the jobs its rules started on them made.
create or replace function request_files_bytes(request uuid) returns bigint language sql stable as $$
    select coalesce(sum(f.file_size), 0)::bigint from files f
    where f.trashed_at is null and f.id in (
        select a.file_id from request_arrivals a where a.request_id = request
        union
        select o.file_id from file_job_outputs o
        join folder_rule_hits h on h.job_id = o.job_id
        join request_arrivals a on a.file_id = h.file_id
        where a.request_id = request)
$$;

alter table file_requests drop column on_arrival;
alter table request_arrivals drop column job_id;
