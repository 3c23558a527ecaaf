-- Templates: a pipeline's steps kept under a name, the account's own, checked once when made;
-- `/create-file-job` runs one on files by its id.
create table job_templates (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    name text not null,
    -- The pipeline's settings as a `pipeline` job row keeps them (`{ steps }`).
    options jsonb not null,
    created_at timestamptz not null default now(),
    unique (user_id, name)
);
