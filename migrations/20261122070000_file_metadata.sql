-- What metadata extraction reads from a file, kept where search can filter on it.
alter table files
    add column title text,
    add column artists text[],
    add column album text,
    add column genre text,
    -- When a photo was taken or a video recorded.
    add column taken_time timestamptz,
    add column duration_seconds double precision,
    -- Beats per minute: as measured, or as the track's own tag says when not measured.
    add column tempo_bpm double precision,
    -- A musical key as a pitch class (0 = C … 11 = B) and a mode ('major', 'minor', or null).
    add column key_pitch smallint check (key_pitch between 0 and 11),
    add column key_mode text check (key_mode in ('major', 'minor')),
    add column latitude double precision check (latitude between -90 and 90),
    add column longitude double precision check (longitude between -180 and 180);

create index files_by_taken on files (user_id, taken_time) where taken_time is not null;
create index files_by_size on files (user_id, file_size);
