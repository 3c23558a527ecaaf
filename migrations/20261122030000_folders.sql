-- Folders say where a file sits; they never change who can see it.
create table folders (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    -- Normalised: a leading slash, segments joined by slashes, no trailing slash ("/a/b").
    path text not null,
    parent_id uuid references folders (id) on delete cascade,
    created_at timestamptz not null default now(),
    constraint folders_one_per_path unique (user_id, path)
);
create index folders_by_parent on folders (parent_id);

-- Null: the top of the drive.
alter table files add column folder_id uuid references folders (id) on delete set null;
create index files_by_folder on files (folder_id) where folder_id is not null;
