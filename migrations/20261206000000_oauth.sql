-- OAuth sign-in for agents and tool clients (authorization code with PKCE), and the scopes
-- that limit an API token. A token an OAuth client gets is an API token like any other: it is
-- exchanged for sessions, starts agent tasks as itself, and is revoked the same way.

-- What a token may do: `read` (list, search, read, links, events), `write` (add and change
-- files and everything else), `delete` (trash, restore, delete). Tokens made before scopes
-- existed keep every one.
alter table api_tokens
    add column scopes text[] not null default '{read,write,delete}'
        check (scopes <@ '{read,write,delete}'::text[] and cardinality(scopes) > 0);

-- Clients register themselves (RFC 7591); all are public clients: PKCE, no secret.
create table oauth_clients (
    id uuid primary key,
    name text not null,
    redirect_uris text[] not null,
    created_at timestamptz not null default now()
);

-- The API token a client got, when it got it through OAuth (its connection).
alter table api_tokens add column oauth_client_id uuid references oauth_clients (id) on delete cascade;
create index api_tokens_by_user on api_tokens (user_id, created_at);

-- A code the consent page gave, good for ten minutes and one exchange. Kept after the
-- exchange (`token_id`) so that a second exchange of the same code revokes what the first
-- one got (the code was stolen, or replayed).
create table oauth_codes (
    code_hash bytea primary key,
    client_id uuid not null references oauth_clients (id) on delete cascade,
    user_id uuid not null references users (id) on delete cascade,
    redirect_uri text not null,
    code_challenge text not null,
    scopes text[] not null check (scopes <@ '{read,write,delete}'::text[] and cardinality(scopes) > 0),
    expires_at timestamptz not null,
    -- Set by the first exchange, right or wrong: a code gets one try.
    tried boolean not null default false,
    token_id uuid references api_tokens (id) on delete cascade
);
create index oauth_codes_expiry on oauth_codes (expires_at);
