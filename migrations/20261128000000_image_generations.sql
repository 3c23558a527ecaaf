-- Images generated from a prompt (`/generate-image`). A generation is worked by the farm as a
-- `generateImage` job (its row gives the queue, the claim, the heartbeat and the retries); this
-- row is what the caller sees. Its image is an ordinary file of the caller's: deleting the file
-- for good sets `file_id` to null, and the sweep then fails the generation (the state table's
-- "no image 15 minutes on").
create table image_generations (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    job_id uuid not null references file_jobs (id) on delete cascade,
    model text not null,
    aspect_ratio text not null,
    quality text,
    prompt text not null,
    status text not null default 'working' check (status in ('working', 'done', 'failed')),
    error text,
    -- A polling provider's task (its id and where to ask), kept as soon as it is submitted so
    -- that a new attempt after a worker died asks about the same task instead of paying for a
    -- second one.
    provider_task jsonb,
    -- When the provider handed the image over (the 15 minutes run from here), and its media
    -- type: the image is stored before it is recorded, and a new attempt records what is
    -- stored.
    succeeded_at timestamptz,
    image_type text,
    file_id uuid references files (id) on delete set null,
    created_at timestamptz not null default now(),
    ended_at timestamptz
);

-- The month's allowance counts an account's generations by creation time.
create index image_generations_by_user on image_generations (user_id, created_at);
-- The sweep looks for succeeded generations still without an image.
create index image_generations_succeeded on image_generations (succeeded_at)
    where succeeded_at is not null and file_id is null and status <> 'failed';
