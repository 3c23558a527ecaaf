-- Tags are case-insensitive and kept in the case they were first written.
create table tags (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    text text not null,
    created_at timestamptz not null default now()
);
create unique index tags_one_per_name on tags (user_id, lower(text));

create table file_tags (
    file_id uuid not null references files (id) on delete cascade,
    tag_id uuid not null references tags (id) on delete cascade,
    primary key (file_id, tag_id)
);
create index file_tags_by_tag on file_tags (tag_id);

alter table files add column description text;
