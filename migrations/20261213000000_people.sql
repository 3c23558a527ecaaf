-- People sign in to the app with a password (argon2id, PHC string), set from an invitation
-- link, and an optional TOTP second factor. Guesses are limited per account: past a number of
-- wrong ones in a row the account takes no password until `guesses_locked_until`.
alter table users
    add column password_hash text,
    -- The TOTP key, sealed to the account (core::sealed); `totp_pending` is a key begun and
    -- not yet confirmed with a code.
    add column totp_sealed bytea,
    add column totp_pending bytea,
    -- The last time step whose code was taken: a code is good once.
    add column totp_last_step bigint,
    add column wrong_guesses integer not null default 0,
    add column guesses_locked_until timestamptz;

-- A link that lets its holder set the account's password, once, before it expires.
create table invitations (
    token_hash bytea primary key,
    user_id uuid not null references users (id) on delete cascade,
    created_at timestamptz not null default now(),
    expires_at timestamptz not null,
    used_at timestamptz
);
create index invitations_by_user on invitations (user_id);

-- A sign-in is an API token of the account that one browser holds in an HttpOnly cookie and
-- renews its short sessions with: listed and ended like the rest, never shown to a script.
alter table api_tokens
    add column sign_in boolean not null default false,
    add column user_agent text,
    add column address text,
    add column last_used_at timestamptz;
create index api_tokens_sign_ins on api_tokens (user_id) where sign_in and revoked_at is null;
