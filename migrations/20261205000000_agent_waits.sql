-- An agent task waiting for something to happen on its account: files sent to a request (drop),
-- notes on a review (note), someone opening a file (view), files landing in a folder (file), an
-- image generation finishing (generation) or a job ending (job). The task stays working but no
-- worker holds it; the drive event feed wakes it, and the model goes on from where it stopped
-- (`transcript`, the conversation up to its `wait_for` call, answered with `happened`).
create table agent_waits (
    task_id uuid primary key references agent_tasks (id) on delete cascade,
    user_id uuid not null references users (id) on delete cascade,
    -- The drive event kind that answers it; for a folder, `file` (and drops and jobs landing
    -- files in it).
    kind text not null check (kind in ('drop', 'note', 'view', 'file', 'generation', 'job')),
    -- What it waits on: the request, review, file, generation, job or folder.
    subject_id uuid not null,
    -- The folder's path, for a folder (folders inside it count too).
    folder text,
    -- The database's snapshot when the agent asked to wait: only events of transactions it does
    -- not see (not yet committed then) answer, so nothing from before counts and nothing after
    -- is missed.
    after_snapshot pg_snapshot not null,
    -- At most 30 days.
    until timestamptz not null,
    -- What it waits for, in words: told to the model and shown on the task.
    what text not null,
    transcript jsonb not null,
    call_id text not null,
    -- The links the task made before waiting, attached to its reply in the end.
    links jsonb not null default '[]',
    -- Null while waiting; then what happened (the events, or why the wait ended without one).
    happened jsonb,
    created_at timestamptz not null default now()
);

create index agent_waits_waiting on agent_waits (user_id) where happened is null;

-- Whether the drive event `e` answers the wait `w` (both of the same account).
create function wait_answered_by(w agent_waits, e drive_events) returns boolean
language sql stable as $$
    select case
        when w.folder is null then e.kind = w.kind and e.subject_id = w.subject_id
        -- A file event is about its file; a drop's and a job's files are in their `files`.
        else e.kind in ('file', 'drop', 'job') and exists (
            select 1 from files f join folders d on d.id = f.folder_id
            where f.user_id = w.user_id and path_within(d.path, w.folder)
              and (f.id = e.subject_id
                   or f.id::text in (select jsonb_array_elements(e.fields -> 'files') ->> 'id')))
    end
$$;

-- Whether what `w` waits on has closed: a request closed or past its expiry, a review or a
-- folder deleted, a file trashed or deleted. A generation and a job close with their event.
create function wait_closed(w agent_waits) returns boolean
language sql stable as $$
    select case w.kind
        when 'drop' then not exists (
            select 1 from file_requests r
            where r.id = w.subject_id and r.closed_at is null
              and (r.expires_at is null or r.expires_at > now()))
        when 'note' then not exists (select 1 from file_reviews v where v.id = w.subject_id)
        when 'view' then not exists (
            select 1 from files f where f.id = w.subject_id and f.trashed_at is null)
        when 'file' then not exists (select 1 from folders d where d.id = w.subject_id)
        else false
    end
$$;
