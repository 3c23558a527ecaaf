-- Drive-event webhooks: an account's https endpoint and the event kinds it wants. Each
-- subscription keeps its own place in the account's event log (`after_xid`, `after_seq`: the
-- feed's cursor, see `drive_events`), so its events are POSTed once each, in order, and none
-- is skipped when a delivery fails: the next attempt starts from the same place.
create table event_subscriptions (
    id uuid primary key,
    user_id uuid not null references users (id) on delete cascade,
    url text not null,
    kinds text[] not null,
    -- The signing secret, sealed (XChaCha20-Poly1305 under a key derived from DRIVE_SECRET,
    -- bound to the row's id): a database leak does not let anyone sign as the drive.
    secret_sealed bytea not null,
    after_xid xid8 not null,
    after_seq bigint not null,
    created_at timestamptz not null default now(),
    -- `disabled` once deliveries have failed for three days; the events stay in the feed.
    state text not null default 'active' check (state in ('active', 'disabled')),
    failures integer not null default 0,
    retry_at timestamptz not null default '-infinity',
    failing_since timestamptz,
    last_error text,
    last_delivered_at timestamptz,
    -- The worker delivering it now, until when: one deliverer per subscription at a time.
    leased_by uuid,
    leased_until timestamptz
);

create index event_subscriptions_by_user on event_subscriptions (user_id, created_at);
create index event_subscriptions_active on event_subscriptions (retry_at) where state = 'active';
