-- Playlists (audio and video) and galleries (images) are one structure: an ordered set of
-- files, with featured images up front in galleries.
create table collections (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    kind text not null check (kind in ('playlist', 'gallery')),
    title text not null,
    description text,
    is_public boolean not null default false,
    created_at timestamptz not null default now()
);
create index collections_by_user on collections (user_id, kind, created_at);

create table collection_items (
    collection_id uuid not null references collections (id) on delete cascade,
    file_id uuid not null references files (id) on delete cascade,
    position bigint not null,
    featured boolean not null default false,
    primary key (collection_id, file_id)
);
create index collection_items_by_file on collection_items (file_id);
