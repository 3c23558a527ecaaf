-- Searching inside files. A file the owner has had read (a readForSearch job) has a reading:
-- `read` with its moments, or `failed` with why. Deleting or purging the file deletes both
-- (cascades), whatever path deletes it.
create table file_readings (
    file_id uuid primary key references files (id) on delete cascade,
    user_id uuid not null references users (id) on delete cascade,
    state text not null check (state in ('read', 'failed')),
    error text,
    moment_count integer not null default 0 check (moment_count >= 0),
    read_at timestamptz not null default now(),
    constraint file_readings_failed_has_error check ((state = 'failed') = (error is not null))
);

-- What was said, seen or written in a file, with where: `at`/`until` seconds into a recording,
-- `page` of a document (from 1); null when the source has no such place (a text file).
-- `words` is for matching by words (websearch_to_tsquery), `embedding` for matching by
-- meaning: all-MiniLM-L6-v2's 384 numbers as little-endian f32 (this PostgreSQL has no
-- pgvector; the API ranks by cosine over an account's embeddings, kept in its memory).
create table moments (
    id bigserial primary key,
    file_id uuid not null references file_readings (file_id) on delete cascade,
    user_id uuid not null references users (id) on delete cascade,
    entry_type text not null check (entry_type in ('speech', 'visual', 'text')),
    text text not null check (text <> ''),
    at double precision check (at >= 0),
    until double precision check (until >= at),
    page integer check (page >= 1),
    words tsvector generated always as (to_tsvector('english', text)) stored,
    embedding bytea not null check (length(embedding) = 384 * 4)
);
create index moments_by_file on moments (file_id);
create index moments_by_owner on moments (user_id, id);
create index moments_words on moments using gin (words);

-- A number per account that changes whenever one of its moments is added or removed, so an
-- API process can tell with one row whether the embeddings it keeps in memory are current.
-- Kept by triggers, so deletes cascading from a file or an account count too. No foreign key:
-- deleting an account cascades to its moments, whose trigger would then write a row for an
-- account already gone.
create table moment_generations (
    user_id uuid primary key,
    generation bigint not null
);

create function moments_changed() returns trigger language plpgsql as $$
begin
    insert into moment_generations (user_id, generation)
    select distinct user_id, 1 from changed
    on conflict (user_id) do update set generation = moment_generations.generation + 1;
    return null;
end
$$;

create trigger moments_added after insert on moments
    referencing new table as changed for each statement execute function moments_changed();
create trigger moments_removed after delete on moments
    referencing old table as changed for each statement execute function moments_changed();
