-- The presigned forms issued for each key, and until when the last one can write. The store
-- cannot withdraw a signed form, so a form outlives the insert that recorded its object: a key
-- keeps the one size its first form or upload was issued for for as long as any form for it
-- can write, and until then the drive re-reads what is stored under a recorded key (its ETag
-- against the one it recorded) before it hands the bytes out, and the sweep does so on its
-- rounds; once the last form has expired, an object no file records under the key is removed.
create table upload_forms (
    object_key text primary key,
    user_id uuid not null references users (id) on delete cascade,
    file_size bigint not null check (file_size >= 0),
    form_until timestamptz not null,
    -- The stored object's ETag when a file was recorded under the key (null before): another
    -- one means a form wrote the key again, and the record follows.
    recorded_etag text
);
create index upload_forms_until on upload_forms (form_until);
