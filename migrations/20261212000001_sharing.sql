-- Sharing with people: an owner shares files, or a folder (the files in it and in the folders
-- below it, now and later), with other accounts, who may see them (list, search, read,
-- download) and never change them.
create table file_shares (
    id uuid primary key,
    owner_id uuid not null references users (id) on delete cascade,
    grantee_id uuid not null references users (id) on delete cascade,
    file_id uuid references files (id) on delete cascade,
    folder_id uuid references folders (id) on delete cascade,
    created_at timestamptz not null default now(),
    constraint file_shares_one_thing check ((file_id is null) <> (folder_id is null)),
    constraint file_shares_not_oneself check (owner_id <> grantee_id),
    constraint file_shares_file_once unique (file_id, grantee_id),
    constraint file_shares_folder_once unique (folder_id, grantee_id)
);
create index file_shares_by_grantee on file_shares (grantee_id, owner_id);
create index file_shares_by_owner on file_shares (owner_id, created_at desc);

-- Whether the file ($1, sitting in folder $2) is shared with $3: itself, or the folder it sits
-- in or one above it. The one definition every query that reaches shared files uses.
create function shared_with(uuid, uuid, uuid) returns boolean
    language sql stable
    return exists (select 1 from file_shares s where s.grantee_id = $3 and s.file_id = $1)
        or ($2 is not null and exists (
            select 1 from file_shares s
            join folders shared on shared.id = s.folder_id
            join folders d on d.id = $2
            where s.grantee_id = $3 and d.user_id = shared.user_id and path_within(d.path, shared.path)));

-- Whether an account lets owners see when it opens their shared files (named in their views).
alter table users add column show_views boolean not null default true;

alter table drive_events drop constraint drive_events_kind_check;
alter table drive_events add constraint drive_events_kind_check check (kind in (
    'drop', 'note', 'view', 'file', 'generation', 'job',
    'trashed', 'restored', 'deleted', 'moved', 'renamed', 'access', 'shared', 'unshared'));
