-- File requests: a link anyone can send files to without an account. What arrives lands in a
-- folder of the owner's as the owner's files.
create table file_requests (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    title text not null,
    message text,
    folder_id uuid not null references folders (id),
    created_at timestamptz not null default now(),
    closed_at timestamptz,
    expires_at timestamptz,
    -- Most the request takes across every sender: files still there plus uploads under way.
    max_bytes bigint check (max_bytes >= 1),
    -- Extensions (lower case, with the dot) and kinds (Video, Audio, Image, Pdf, Text, Archive)
    -- it takes; null takes anything.
    accept_types text[],
    max_files_per_sender integer check (max_files_per_sender >= 1)
);
create index file_requests_by_user on file_requests (user_id, created_at desc);

-- One sender's visit: a name, a note and what it sent. The token (stored as its digest) is the
-- sender's only credential, good for this drop alone.
create table request_drops (
    id uuid primary key,
    request_id uuid not null references file_requests (id) on delete cascade,
    token_digest bytea not null unique,
    sender_name text not null,
    note text,
    created_at timestamptz not null default now(),
    finished_at timestamptz,
    -- Whether the owner has listed it.
    viewed boolean not null default false
);
create index request_drops_by_request on request_drops (request_id);

-- Each file a sender announces: its bytes are reserved under object_key (upload_reservations,
-- with the request's id) until it is recorded as file_id, or the reservation lapses.
create table request_arrivals (
    id uuid primary key,
    request_id uuid not null references file_requests (id) on delete cascade,
    drop_id uuid not null references request_drops (id) on delete cascade,
    object_key text not null unique,
    file_name text not null,
    file_size bigint not null check (file_size >= 0),
    mime_type text not null,
    kind text not null,
    created_at timestamptz not null default now(),
    -- The file it became; null until recorded, and again once the owner deletes it.
    file_id uuid unique references files (id) on delete set null
);
create index request_arrivals_by_drop on request_arrivals (drop_id);
create index request_arrivals_by_request on request_arrivals (request_id) where file_id is not null;

-- A sender's upload reserves room in the request as well as in the owner's quota.
alter table upload_reservations
    add column request_id uuid references file_requests (id) on delete cascade;
create index upload_reservations_by_request on upload_reservations (request_id) where request_id is not null;
