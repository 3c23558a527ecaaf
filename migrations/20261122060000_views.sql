-- Opens of a file by anyone but its owner, one row per file, day and viewer. Signed-in viewers
-- are kept by account; anonymous ones share the nil uuid and are only ever counted.
create table file_views (
    file_id uuid not null references files (id) on delete cascade,
    day date not null,
    viewer uuid not null,
    opens integer not null,
    last_time timestamptz not null,
    primary key (file_id, day, viewer)
);
create index file_views_by_day on file_views (day, file_id);
