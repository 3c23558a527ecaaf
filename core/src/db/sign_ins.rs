//! What people sign in with and what they open: passwords, invitations, TOTP keys, the count
//! of wrong guesses, and sign-ins (API tokens a browser holds in a cookie, renewing short
//! sessions with them).

use chrono::{DateTime, TimeDelta, Utc};
use sqlx::{PgExecutor, PgPool};

use crate::db::users::NewApiToken;
use crate::id::{TokenId, UserId};
use crate::scope::Scope;
use crate::token;

/// How long a sign-in lasts unused: a browser away this long signs in again.
pub const IDLE: TimeDelta = TimeDelta::days(30);

/// What an account signs in with, as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Credentials {
    pub user_id: UserId,
    pub handle: String,
    /// argon2id, as a PHC string; `None` until an invitation sets one.
    pub password_hash: Option<String>,
    pub totp_sealed: Option<Vec<u8>>,
    pub totp_pending: Option<Vec<u8>>,
    pub totp_last_step: Option<i64>,
    pub guesses_locked_until: Option<DateTime<Utc>>,
}

const CREDENTIALS: &str = "select id as user_id, handle, password_hash, totp_sealed, totp_pending,
     totp_last_step, guesses_locked_until from users";

pub async fn credentials_by_handle(
    db: impl PgExecutor<'_>,
    handle: &str,
) -> Result<Option<Credentials>, sqlx::Error> {
    sqlx::query_as(&format!("{CREDENTIALS} where handle = $1"))
        .bind(handle)
        .fetch_optional(db)
        .await
}

pub async fn credentials_of(db: impl PgExecutor<'_>, user_id: UserId) -> Result<Credentials, sqlx::Error> {
    sqlx::query_as(&format!("{CREDENTIALS} where id = $1"))
        .bind(user_id)
        .fetch_one(db)
        .await
}

/// Counts a wrong guess; the `most`-th in a row locks guessing for `lock` and starts the count
/// again. Answers until when it is locked, if this guess locked it.
pub async fn count_wrong_guess(
    db: impl PgExecutor<'_>,
    user_id: UserId,
    most: i32,
    lock: TimeDelta,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar(
        "update users set
             wrong_guesses = case when wrong_guesses + 1 >= $2 then 0 else wrong_guesses + 1 end,
             guesses_locked_until = case when wrong_guesses + 1 >= $2 then now() + $3 else guesses_locked_until end
         where id = $1
         returning case when wrong_guesses = 0 then guesses_locked_until end",
    )
    .bind(user_id)
    .bind(most)
    .bind(lock)
    .fetch_one(db)
    .await
}

pub async fn clear_wrong_guesses(db: impl PgExecutor<'_>, user_id: UserId) -> Result<(), sqlx::Error> {
    sqlx::query("update users set wrong_guesses = 0 where id = $1 and wrong_guesses > 0")
        .bind(user_id)
        .execute(db)
        .await?;
    Ok(())
}

/// Takes the TOTP code of `step`: false when that step or a later one was taken already (a
/// code is good once, even by two sign-ins at the same moment).
pub async fn take_totp_step(
    db: impl PgExecutor<'_>,
    user_id: UserId,
    step: i64,
) -> Result<bool, sqlx::Error> {
    let taken = sqlx::query(
        "update users set totp_last_step = $2
         where id = $1 and (totp_last_step is null or totp_last_step < $2)",
    )
    .bind(user_id)
    .bind(step)
    .execute(db)
    .await?;
    Ok(taken.rows_affected() == 1)
}

pub async fn set_password(db: impl PgExecutor<'_>, user_id: UserId, hash: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update users set password_hash = $2, wrong_guesses = 0, guesses_locked_until = null where id = $1",
    )
    .bind(user_id)
    .bind(hash)
    .execute(db)
    .await?;
    Ok(())
}

/// Keeps a TOTP key begun and not yet confirmed (a new one replaces it).
pub async fn begin_totp(db: impl PgExecutor<'_>, user_id: UserId, sealed: &[u8]) -> Result<(), sqlx::Error> {
    sqlx::query("update users set totp_pending = $2 where id = $1")
        .bind(user_id)
        .bind(sealed)
        .execute(db)
        .await?;
    Ok(())
}

/// Makes the key begun the account's second factor, its code of `step` taken.
pub async fn confirm_totp(db: impl PgExecutor<'_>, user_id: UserId, step: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update users set totp_sealed = totp_pending, totp_pending = null, totp_last_step = $2
         where id = $1 and totp_pending is not null",
    )
    .bind(user_id)
    .bind(step)
    .execute(db)
    .await?;
    Ok(())
}

pub async fn remove_totp(db: impl PgExecutor<'_>, user_id: UserId) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update users set totp_sealed = null, totp_pending = null, totp_last_step = null where id = $1",
    )
    .bind(user_id)
    .execute(db)
    .await?;
    Ok(())
}

/// A new invitation to set the account's password, good once until `lifetime` has passed.
pub async fn create_invitation(
    pool: &PgPool,
    user_id: UserId,
    lifetime: TimeDelta,
) -> Result<String, sqlx::Error> {
    let secret = token::generate("drive_invite_");
    sqlx::query("insert into invitations (token_hash, user_id, expires_at) values ($1, $2, now() + $3)")
        .bind(token::digest(&secret))
        .bind(user_id)
        .bind(lifetime)
        .execute(pool)
        .await?;
    Ok(secret)
}

/// Uses up a live invitation; the account it is for, or `None` (unknown, used or expired).
pub async fn take_invitation(db: impl PgExecutor<'_>, secret: &str) -> Result<Option<UserId>, sqlx::Error> {
    sqlx::query_scalar(
        "update invitations set used_at = now()
         where token_hash = $1 and used_at is null and expires_at > now()
         returning user_id",
    )
    .bind(token::digest(secret))
    .fetch_optional(db)
    .await
}

/// Opens a sign-in: an API token that may do everything the person may, which only the
/// browser's cookie holds.
pub async fn open(
    db: impl PgExecutor<'_>,
    user_id: UserId,
    user_agent: &str,
    address: &str,
) -> Result<NewApiToken, sqlx::Error> {
    let secret = token::generate("drive_signin_");
    let id = sqlx::query_scalar(
        "insert into api_tokens (id, user_id, token_hash, label, scopes, sign_in, user_agent, address, last_used_at)
         values ($1, $2, $3, 'sign-in', $4, true, $5, $6, now()) returning id",
    )
    .bind(TokenId::random())
    .bind(user_id)
    .bind(token::digest(&secret))
    .bind(Scope::to_column(&Scope::ALL))
    .bind(user_agent)
    .bind(address)
    .fetch_one(db)
    .await?;
    Ok(NewApiToken { id, secret })
}

/// The live sign-in a cookie holds, used within `idle`, marked used now; `None` otherwise.
pub async fn touch(pool: &PgPool, secret: &str, idle: TimeDelta) -> Result<Option<TokenId>, sqlx::Error> {
    sqlx::query_scalar(
        "update api_tokens set last_used_at = now()
         where token_hash = $1 and sign_in and revoked_at is null and last_used_at > now() - $2
         returning id",
    )
    .bind(token::digest(secret))
    .bind(idle)
    .fetch_optional(pool)
    .await
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SignIn {
    pub id: TokenId,
    pub user_agent: Option<String>,
    pub address: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

/// The account's live sign-ins used within `idle`, the latest used first.
pub async fn list(pool: &PgPool, user_id: UserId, idle: TimeDelta) -> Result<Vec<SignIn>, sqlx::Error> {
    sqlx::query_as(
        "select id, user_agent, address, created_at, last_used_at from api_tokens
         where user_id = $1 and sign_in and revoked_at is null and last_used_at > now() - $2
         order by last_used_at desc, id",
    )
    .bind(user_id)
    .bind(idle)
    .fetch_all(pool)
    .await
}

/// Ends the account's sign-in `one`, or all of them, with every session they opened; answers
/// how many ended.
pub async fn end(pool: &PgPool, user_id: UserId, one: Option<TokenId>) -> Result<u64, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let ended: Vec<TokenId> = sqlx::query_scalar(
        "update api_tokens set revoked_at = now()
         where user_id = $1 and sign_in and revoked_at is null and ($2::uuid is null or id = $2)
         returning id",
    )
    .bind(user_id)
    .bind(one)
    .fetch_all(&mut *tx)
    .await?;
    sqlx::query("delete from sessions where api_token_id = any($1)")
        .bind(&ended)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(ended.len() as u64)
}

/// Ends the sign-in a cookie holds, with every session it opened (signing out).
pub async fn close(pool: &PgPool, secret: &str) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    let ended: Option<TokenId> = sqlx::query_scalar(
        "update api_tokens set revoked_at = now()
         where token_hash = $1 and sign_in and revoked_at is null returning id",
    )
    .bind(token::digest(secret))
    .fetch_optional(&mut *tx)
    .await?;
    sqlx::query("delete from sessions where api_token_id = $1")
        .bind(ended)
        .execute(&mut *tx)
        .await?;
    tx.commit().await
}
