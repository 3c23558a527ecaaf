-- Accounts, credentials, files, multipart uploads and the drive event log.

create table users (
    id uuid primary key,
    handle text not null unique,
    display_name text,
    -- null: the account has no plan and may not add files.
    plan text check (plan in ('Intro', 'Basic', 'Pro')),
    created_at timestamptz not null default now()
);

create table api_tokens (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    token_hash bytea not null unique,
    label text not null,
    created_at timestamptz not null default now(),
    revoked_at timestamptz
);

create table sessions (
    token_hash bytea primary key,
    user_id uuid not null references users (id) on delete cascade,
    api_token_id uuid not null references api_tokens (id) on delete cascade,
    expires_at timestamptz not null
);
create index sessions_expiry on sessions (expires_at);

create table files (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    file_name text not null,
    file_size bigint not null check (file_size >= 0),
    mime_type text not null,
    kind text not null,
    bucket text not null check (bucket in ('private', 'public')),
    object_key text not null,
    -- The client's modified time of the source file, when it says (used to skip re-uploads).
    modified_time timestamptz,
    -- Set on extracted derivatives (album art, video posters): the file they came from.
    derivative_of uuid references files (id) on delete cascade,
    trashed_at timestamptz,
    created_at timestamptz not null default now(),
    -- One record per stored object: a key is never recorded twice.
    constraint files_object_key_unique unique (object_key)
);
create index files_library on files (user_id, created_at desc, id desc)
    where trashed_at is null and derivative_of is null;
create index files_trash on files (user_id, trashed_at desc) where trashed_at is not null;
create index files_derivatives on files (derivative_of) where derivative_of is not null;

-- Objects whose records were deleted and whose bytes are still to be removed from the store.
create table object_deletions (
    id bigserial primary key,
    bucket text not null,
    object_key text not null,
    created_at timestamptz not null default now()
);

create table multipart_uploads (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    object_key text not null,
    upload_id text not null,
    file_size bigint not null check (file_size > 0),
    part_size bigint not null check (part_size > 0),
    state text not null check (state in ('open', 'complete', 'aborted')),
    created_at timestamptz not null default now()
);
create unique index multipart_uploads_one_open_per_key on multipart_uploads (object_key)
    where state = 'open';

create table drive_events (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    kind text not null check (kind in ('drop', 'note', 'view', 'file', 'generation', 'job')),
    time timestamptz not null default now(),
    -- The kind's added fields, exactly as the feed answers them.
    fields jsonb not null
);
create index drive_events_by_user_time on drive_events (user_id, time);
