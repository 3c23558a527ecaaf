-- A drive-event subscription is a standing grant of the token that made it: it reads every
-- event it asked for for as long as it lives. It ends with that token: revoking the token (by
-- the person, the app's connection being revoked, or an admin) deletes the subscriptions it
-- made. Subscriptions made before tokens were recorded belong to no token and stay until
-- deleted.
alter table event_subscriptions
    add column api_token_id uuid references api_tokens (id) on delete cascade;
create index event_subscriptions_token on event_subscriptions (api_token_id);

create function end_grants_of_revoked_token() returns trigger language plpgsql as $$
begin
    delete from event_subscriptions where api_token_id = new.id;
    return new;
end
$$;

create trigger api_tokens_revoked
    after update of revoked_at on api_tokens
    for each row when (old.revoked_at is null and new.revoked_at is not null)
    execute function end_grants_of_revoked_token();
