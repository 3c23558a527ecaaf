-- Digests checksum jobs computed, kept with their file. A recorded object is never written
-- again, so a later checksum of the same file with the same algorithm is answered from here at
-- once, with no job run.
create table file_digests (
    file_id uuid not null references files (id) on delete cascade,
    algorithm text not null check (algorithm in ('sha256', 'md5')),
    digest text not null,
    primary key (file_id, algorithm)
);
