-- What reading an audio, video or picture file finds beyond the searchable metadata, and
-- how the reading went.
alter table files
    add column width integer,
    add column height integer,
    add column video_codec text,
    add column audio_codec text,
    -- A Chromaprint-style fingerprint of the first two minutes of sound: one code per frame.
    add column soundprint integer[],
    -- Null for files nobody reads (not audio, video or a picture); else pending, then read
    -- or failed with its reason.
    add column metadata_state text check (metadata_state in ('pending', 'read', 'failed')),
    add column metadata_error text;
