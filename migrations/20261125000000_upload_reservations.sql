-- Bytes promised to uploads that are not files yet. A form or a multipart upload reserves its
-- declared size against the account's quota from the moment it is issued until /insert-file
-- records it (the reservation is then released and the bytes counted in users.used_bytes) or
-- the reservation expires, when the sweep removes whatever was stored under the key. One row
-- per key; the row is also the lock that serializes an insert, a completion and the sweep of
-- that key.
create table upload_reservations (
    object_key text primary key,
    user_id uuid not null references users (id) on delete cascade,
    file_size bigint not null check (file_size >= 0),
    -- When a form was last issued for the key and stops working (null: multipart only); an
    -- aborted multipart upload releases the reservation only when no form can still write.
    form_until timestamptz,
    expires_at timestamptz not null,
    created_at timestamptz not null default now()
);
create index upload_reservations_user on upload_reservations (user_id);
create index upload_reservations_expiry on upload_reservations (expires_at);

-- Trash of a public file moves its bytes to the private bucket (nothing anonymous reaches a
-- trashed file); this remembers to make it public again when it is restored.
alter table files add column public_on_restore boolean not null default false;
create index object_deletions_key on object_deletions (bucket, object_key);
