//! Accounts, their API tokens and the sessions exchanged for them.

use chrono::{DateTime, TimeDelta, Utc};
use sqlx::PgPool;

use crate::id::{ClientId, TokenId, UserId};
use crate::plan::Plan;
use crate::scope::Scope;
use crate::token;

/// How long a session token lives: one day.
pub const SESSION_LIFETIME: TimeDelta = TimeDelta::seconds(86_400);

#[derive(Debug, Clone)]
pub struct NewApiToken {
    pub id: TokenId,
    /// Shown once; only its digest is stored.
    pub secret: String,
}

pub async fn create_user(pool: &PgPool, handle: &str, plan: Option<Plan>) -> Result<UserId, sqlx::Error> {
    sqlx::query_scalar("insert into users (id, handle, plan) values ($1, $2, $3) returning id")
        .bind(UserId::random())
        .bind(handle)
        .bind(plan.map(Plan::as_str))
        .fetch_one(pool)
        .await
}

pub async fn user_id_by_handle(pool: &PgPool, handle: &str) -> Result<Option<UserId>, sqlx::Error> {
    sqlx::query_scalar("select id from users where handle = $1")
        .bind(handle)
        .fetch_optional(pool)
        .await
}

/// A new API token of the account that may do what `scopes` say (at least one); `client`: the
/// OAuth client it is given to, for a connection.
pub async fn create_api_token(
    db: impl sqlx::PgExecutor<'_>,
    user_id: UserId,
    label: &str,
    scopes: &[Scope],
    client: Option<ClientId>,
) -> Result<NewApiToken, sqlx::Error> {
    let secret = token::generate("drive_api_");
    let id = sqlx::query_scalar(
        "insert into api_tokens (id, user_id, token_hash, label, scopes, oauth_client_id)
         values ($1, $2, $3, $4, $5, $6) returning id",
    )
    .bind(TokenId::random())
    .bind(user_id)
    .bind(token::digest(&secret))
    .bind(label)
    .bind(Scope::to_column(scopes))
    .bind(client)
    .fetch_one(db)
    .await?;
    Ok(NewApiToken { id, secret })
}

/// Revokes an API token and ends every session exchanged for it. False when no live token
/// has that id.
pub async fn revoke_api_token(pool: &PgPool, token_id: TokenId) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let revoked =
        sqlx::query("update api_tokens set revoked_at = now() where id = $1 and revoked_at is null")
            .bind(token_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    sqlx::query("delete from sessions where api_token_id = $1")
        .bind(token_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(revoked == 1)
}

#[derive(Debug, Clone)]
pub struct Session {
    pub token: String,
    pub user_id: UserId,
    pub expires_at: DateTime<Utc>,
}

/// Exchanges a live API token for a new session; `None` when the token is unknown or revoked,
/// or a sign-in's (which only its cookie renews, at `/renew-session`).
pub async fn exchange(pool: &PgPool, api_secret: &str) -> Result<Option<Session>, sqlx::Error> {
    open_session(pool, Some(token::digest(api_secret)), None, SESSION_LIFETIME).await
}

/// The account and token behind a live API token (the agent interface's bearer, the consent
/// page's sign-in).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TokenUser {
    pub user_id: UserId,
    pub token_id: TokenId,
    /// What the token may do, as stored (see [`Scope::from_column`]).
    pub scopes: Vec<String>,
    /// Whether the token is one an app got through OAuth.
    pub app: bool,
}

pub async fn api_token_user(pool: &PgPool, api_secret: &str) -> Result<Option<TokenUser>, sqlx::Error> {
    sqlx::query_as(
        "select user_id, id as token_id, scopes, oauth_client_id is not null as app from api_tokens
         where token_hash = $1 and revoked_at is null and not sign_in",
    )
    .bind(token::digest(api_secret))
    .fetch_optional(pool)
    .await
}

/// A session of the live API token `token_id` lasting `lifetime`, for the drive acting as that
/// token (an agent task's tool calls): revoking the token ends it, like any of the token's.
pub async fn session_for_token(
    pool: &PgPool,
    token_id: TokenId,
    lifetime: TimeDelta,
) -> Result<Option<Session>, sqlx::Error> {
    open_session(pool, None, Some(token_id), lifetime).await
}

/// A new session lasting `lifetime` of the live API token with this digest or this id; `None`
/// when there is none such (unknown or revoked).
async fn open_session(
    pool: &PgPool,
    digest: Option<Vec<u8>>,
    token_id: Option<TokenId>,
    lifetime: TimeDelta,
) -> Result<Option<Session>, sqlx::Error> {
    let token = token::generate("drive_session_");
    let expires_at = Utc::now() + lifetime;
    let user_id: Option<UserId> = sqlx::query_scalar(
        "insert into sessions (token_hash, user_id, api_token_id, expires_at)
         select $3, user_id, id, $4 from api_tokens
         where ((token_hash = $1 and not sign_in) or id = $2) and revoked_at is null
         returning user_id",
    )
    .bind(digest)
    .bind(token_id)
    .bind(token::digest(&token))
    .bind(expires_at)
    .fetch_optional(pool)
    .await?;
    Ok(user_id.map(|user_id| Session {
        token,
        user_id,
        expires_at,
    }))
}

/// Ends a session early (an agent task's, when the task ends).
pub async fn end_session(pool: &PgPool, session_secret: &str) -> Result<(), sqlx::Error> {
    sqlx::query("delete from sessions where token_hash = $1")
        .bind(token::digest(session_secret))
        .execute(pool)
        .await?;
    Ok(())
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionUser {
    pub user_id: UserId,
    /// The API token the session was exchanged for.
    pub token_id: TokenId,
    pub plan: Option<Plan>,
    pub expires_at: DateTime<Utc>,
    /// What the session's API token may do, as stored.
    pub scopes: Vec<String>,
    /// Whether the token is one an app got through OAuth.
    pub app: bool,
}

/// The account behind a session token, expired or not (the caller tells the two apart); a
/// session of a revoked API token finds nothing, whoever revoked it and however.
pub async fn session_user(pool: &PgPool, session_secret: &str) -> Result<Option<SessionUser>, sqlx::Error> {
    sqlx::query_as(
        "select s.user_id, t.id as token_id, u.plan, s.expires_at, t.scopes, t.oauth_client_id is not null as app
         from sessions s
         join users u on u.id = s.user_id
         join api_tokens t on t.id = s.api_token_id and t.revoked_at is null
         where s.token_hash = $1",
    )
    .bind(token::digest(session_secret))
    .fetch_optional(pool)
    .await
}

/// Bytes the account stores, trash included (kept by every insert and delete in `db::files`).
pub async fn used_bytes(pool: &PgPool, user_id: UserId) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("select used_bytes from users where id = $1")
        .bind(user_id)
        .fetch_one(pool)
        .await
}

/// The account's handle (how its replies to review notes are signed).
pub async fn handle_of(pool: &PgPool, user_id: UserId) -> Result<String, sqlx::Error> {
    sqlx::query_scalar("select handle from users where id = $1")
        .bind(user_id)
        .fetch_one(pool)
        .await
}

/// The account's plan, `None` when it has none (or no such account).
pub async fn plan_of(pool: &PgPool, user_id: UserId) -> Result<Option<Plan>, sqlx::Error> {
    Ok(sqlx::query_scalar("select plan from users where id = $1")
        .bind(user_id)
        .fetch_optional(pool)
        .await?
        .flatten())
}

/// Removes sessions that ended before `now`; they can only answer 401 anyway.
pub async fn delete_sessions_expired_before(pool: &PgPool, now: DateTime<Utc>) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query("delete from sessions where expires_at < $1")
        .bind(now)
        .execute(pool)
        .await?
        .rows_affected())
}

/// What an account says of itself to the people it shares with.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Profile {
    pub handle: String,
    pub display_name: Option<String>,
    /// Whether owners see when it opens their shared files.
    pub show_views: bool,
}

pub async fn profile(db: impl sqlx::PgExecutor<'_>, user_id: UserId) -> Result<Profile, sqlx::Error> {
    sqlx::query_as("select handle, display_name, show_views from users where id = $1")
        .bind(user_id)
        .fetch_one(db)
        .await
}

/// Changes what is given: the display name (`Some(None)` clears it) and whether owners see
/// the account's opens of their files.
pub async fn update_profile(
    pool: &PgPool,
    user_id: UserId,
    display_name: Option<Option<&str>>,
    show_views: Option<bool>,
) -> Result<Profile, sqlx::Error> {
    sqlx::query_as(
        "update users set display_name = case when $2 then $3 else display_name end,
                          show_views = coalesce($4, show_views)
         where id = $1
         returning handle, display_name, show_views",
    )
    .bind(user_id)
    .bind(display_name.is_some())
    .bind(display_name.flatten())
    .bind(show_views)
    .fetch_one(pool)
    .await
}

/// The accounts of `handles`, by handle.
pub async fn by_handles(pool: &PgPool, handles: &[String]) -> Result<Vec<(String, UserId)>, sqlx::Error> {
    sqlx::query_as("select handle, id from users where handle = any($1)")
        .bind(handles)
        .fetch_all(pool)
        .await
}
