-- What a token sets up to last is a standing grant of that token: a drive-event subscription
-- reads every event it asked for, a file request lets anyone add files, a review lets anyone
-- with its link play the file. Each ends with the token that made it: revoking the token (by
-- the person, the app's connection being revoked, or an admin) deletes its subscriptions,
-- closes its file requests and closes its reviews (their pages then answer as for a review that
-- is gone; the owner still lists them and their notes). What was made before tokens were
-- recorded belongs to no token and stays until its owner ends it.
alter table event_subscriptions
    add column api_token_id uuid references api_tokens (id) on delete cascade;
create index event_subscriptions_token on event_subscriptions (api_token_id);
alter table file_requests
    add column api_token_id uuid references api_tokens (id) on delete set null;
create index file_requests_token on file_requests (api_token_id);
alter table file_reviews
    add column api_token_id uuid references api_tokens (id) on delete set null,
    add column closed_at timestamptz;
create index file_reviews_token on file_reviews (api_token_id);

create function end_grants_of_revoked_token() returns trigger language plpgsql as $$
begin
    delete from event_subscriptions where api_token_id = new.id;
    update file_requests set closed_at = now() where api_token_id = new.id and closed_at is null;
    update file_reviews set closed_at = now() where api_token_id = new.id and closed_at is null;
    return new;
end
$$;

create trigger api_tokens_revoked
    after update of revoked_at on api_tokens
    for each row when (old.revoked_at is null and new.revoked_at is not null)
    execute function end_grants_of_revoked_token();
