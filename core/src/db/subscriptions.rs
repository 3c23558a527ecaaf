//! Drive-event webhooks: an account's subscriptions, and the deliverers' side of them (claim the
//! ones with events waiting, move their place in the log forward, note a failed delivery).
//! A subscription's place is a feed cursor (`events::Cursor`): everything at or before it was
//! delivered, or was of a kind it does not want.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::db::events::{Cursor, EventKind};
use crate::id::{SubscriptionId, TokenId, UserId};
pub use drive_domain::event::SubscriptionState;

/// Subscriptions one account may have.
pub const MAX_PER_ACCOUNT: i64 = 10;

/// A subscription failing for this long is disabled.
pub const GIVE_UP_AFTER: chrono::TimeDelta = chrono::TimeDelta::days(3);

/// A subscription as its owner sees it (never its secret).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SubscriptionRow {
    pub id: SubscriptionId,
    pub url: String,
    pub kinds: Vec<String>,
    pub state: SubscriptionState,
    pub created_at: DateTime<Utc>,
    pub failures: i32,
    pub failing_since: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub last_delivered_at: Option<DateTime<Utc>>,
}

const ROW: &str = "id, url, kinds, state, created_at, failures, failing_since, last_error, last_delivered_at";

pub struct NewSubscription<'a> {
    pub id: SubscriptionId,
    pub user_id: UserId,
    /// The API token whose session made it: revoking the token ends the subscription.
    pub token_id: Option<TokenId>,
    pub url: &'a str,
    pub kinds: &'a [EventKind],
    pub secret_sealed: Vec<u8>,
}

/// Records a subscription whose first event is the first recorded after this call; `None`
/// when the account has [`MAX_PER_ACCOUNT`] already.
pub async fn create(pool: &PgPool, new: NewSubscription<'_>) -> Result<Option<SubscriptionRow>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // Two creations at once must not both pass the count.
    sqlx::query("select pg_advisory_xact_lock(hashtextextended($1::text, 3))")
        .bind(new.user_id)
        .execute(&mut *tx)
        .await?;
    let count: i64 = sqlx::query_scalar("select count(*) from event_subscriptions where user_id = $1")
        .bind(new.user_id)
        .fetch_one(&mut *tx)
        .await?;
    if count >= MAX_PER_ACCOUNT {
        return Ok(None);
    }
    // Every event of a transaction before the snapshot's xmin is in the log now; later ones
    // are the subscription's (the feed's own end-of-page cursor, `events::page`).
    let kinds: Vec<&str> = new.kinds.iter().map(|k| k.as_str()).collect();
    let row = sqlx::query_as(&format!(
        "insert into event_subscriptions (id, user_id, url, kinds, secret_sealed, after_xid, after_seq, api_token_id)
         values ($1, $2, $3, $4, $5,
                 (pg_snapshot_xmin(pg_current_snapshot())::text::numeric - 1)::text::xid8, $6, $7)
         returning {ROW}"
    ))
    .bind(new.id)
    .bind(new.user_id)
    .bind(new.url)
    .bind(kinds)
    .bind(new.secret_sealed)
    .bind(i64::MAX)
    .bind(new.token_id)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(row))
}

/// The account's subscriptions, oldest first.
pub async fn list(pool: &PgPool, user_id: UserId) -> Result<Vec<SubscriptionRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {ROW} from event_subscriptions where user_id = $1 order by created_at, id"
    ))
    .bind(user_id)
    .fetch_all(pool)
    .await
}

/// Deletes one of the account's subscriptions; false when it has none with that id.
pub async fn delete(pool: &PgPool, user_id: UserId, id: SubscriptionId) -> Result<bool, sqlx::Error> {
    let deleted = sqlx::query("delete from event_subscriptions where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(pool)
        .await?;
    Ok(deleted.rows_affected() == 1)
}

/// A subscription a deliverer holds: where it sends, what, and from where in the log.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub id: SubscriptionId,
    pub user_id: UserId,
    pub url: String,
    pub kinds: Vec<EventKind>,
    pub secret_sealed: Vec<u8>,
    pub after: Cursor,
    pub failures: i32,
    pub failing_since: Option<DateTime<Utc>>,
}

#[derive(sqlx::FromRow)]
struct ClaimedRow {
    id: SubscriptionId,
    user_id: UserId,
    url: String,
    kinds: Vec<String>,
    secret_sealed: Vec<u8>,
    after_xid: String,
    after_seq: i64,
    failures: i32,
    failing_since: Option<DateTime<Utc>>,
}

/// Leases to `deliverer` for `lease` up to `limit` active subscriptions that are due (not
/// waiting to retry, not leased to another) and have an event in the log past their place.
pub async fn claim_due(
    pool: &PgPool,
    deliverer: uuid::Uuid,
    lease: std::time::Duration,
    limit: i64,
) -> Result<Vec<Claimed>, sqlx::Error> {
    let rows: Vec<ClaimedRow> = sqlx::query_as(
        "with due as (
             select s.id from event_subscriptions s
             where s.state = 'active' and s.retry_at <= now()
               and (s.leased_until is null or s.leased_until < now())
               and exists (select 1 from drive_events e
                           where e.user_id = s.user_id
                             and (e.xid, e.seq) > (s.after_xid, s.after_seq)
                             and e.xid < pg_snapshot_xmin(pg_current_snapshot()))
             order by s.retry_at
             limit $3
             for update of s skip locked)
         update event_subscriptions s
         set leased_by = $1, leased_until = now() + make_interval(secs => $2)
         from due where s.id = due.id
         returning s.id, s.user_id, s.url, s.kinds, s.secret_sealed, s.after_xid::text as after_xid,
                   s.after_seq, s.failures, s.failing_since",
    )
    .bind(deliverer)
    .bind(lease.as_secs_f64())
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Claimed {
            id: r.id,
            user_id: r.user_id,
            url: r.url,
            // A kind this build does not know cannot be asked for; it is left out.
            kinds: r.kinds.iter().filter_map(|k| EventKind::parse(k)).collect(),
            secret_sealed: r.secret_sealed,
            after: Cursor {
                xid: r.after_xid.parse().unwrap_or_default(),
                seq: r.after_seq,
            },
            failures: r.failures,
            failing_since: r.failing_since,
        })
        .collect())
}

/// Moves a held subscription's place to `after` (an event delivered, when `delivered`, or the
/// end of what there was) and renews the lease; false when the deliverer no longer holds it
/// (deleted, or its lease ran out and another took it): it must stop.
pub async fn advance(
    pool: &PgPool,
    id: SubscriptionId,
    deliverer: uuid::Uuid,
    after: Cursor,
    delivered: bool,
    lease: std::time::Duration,
) -> Result<bool, sqlx::Error> {
    let moved = sqlx::query(
        "update event_subscriptions
         set after_xid = $3::text::xid8, after_seq = $4, failures = 0, failing_since = null,
             last_error = null, retry_at = '-infinity',
             last_delivered_at = case when $5 then now() else last_delivered_at end,
             leased_until = now() + make_interval(secs => $6)
         where id = $1 and leased_by = $2",
    )
    .bind(id)
    .bind(deliverer)
    .bind(after.xid.to_string())
    .bind(after.seq)
    .bind(delivered)
    .bind(lease.as_secs_f64())
    .execute(pool)
    .await?;
    Ok(moved.rows_affected() == 1)
}

/// Gives a held subscription back.
pub async fn release(pool: &PgPool, id: SubscriptionId, deliverer: uuid::Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update event_subscriptions set leased_by = null, leased_until = null
         where id = $1 and leased_by = $2",
    )
    .bind(id)
    .bind(deliverer)
    .execute(pool)
    .await?;
    Ok(())
}

/// Notes a failed delivery and gives the subscription back: tried again at `retry_at`, or
/// disabled when `disable`.
pub async fn failed(
    pool: &PgPool,
    id: SubscriptionId,
    deliverer: uuid::Uuid,
    error: &str,
    retry_at: DateTime<Utc>,
    disable: bool,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update event_subscriptions
         set failures = failures + 1, failing_since = coalesce(failing_since, now()),
             last_error = $3, retry_at = $4,
             state = case when $5 then 'disabled' else state end,
             leased_by = null, leased_until = null
         where id = $1 and leased_by = $2",
    )
    .bind(id)
    .bind(deliverer)
    .bind(error)
    .bind(retry_at)
    .bind(disable)
    .execute(pool)
    .await?;
    Ok(())
}
