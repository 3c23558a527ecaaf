-- Keep each account's stored bytes on its row, so a quota check is one conditional update
-- instead of a sum over every file the account has.
alter table users add column used_bytes bigint not null default 0 check (used_bytes >= 0);

update users set used_bytes = (
    select coalesce(sum(file_size), 0) from files where files.user_id = users.id
);
