//! OAuth sign-in (authorization code with PKCE): the clients that registered, the codes the
//! consent page gives, and the API tokens ("connections") the codes are exchanged for.

use chrono::{DateTime, TimeDelta, Utc};
use sqlx::PgPool;

use crate::db::users::{self, NewApiToken};
use crate::id::{ClientId, TokenId, UserId};
use crate::scope::Scope;
use crate::token;

/// How long a code may wait for its exchange.
pub const CODE_LIFETIME: TimeDelta = TimeDelta::minutes(10);

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClientRow {
    pub id: ClientId,
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub created_at: DateTime<Utc>,
}

pub async fn register_client(
    pool: &PgPool,
    name: &str,
    redirect_uris: &[String],
) -> Result<ClientRow, sqlx::Error> {
    sqlx::query_as(
        "insert into oauth_clients (id, name, redirect_uris) values ($1, $2, $3)
         returning id, name, redirect_uris, created_at",
    )
    .bind(ClientId::random())
    .bind(name)
    .bind(redirect_uris)
    .fetch_one(pool)
    .await
}

pub async fn find_client(pool: &PgPool, id: ClientId) -> Result<Option<ClientRow>, sqlx::Error> {
    sqlx::query_as("select id, name, redirect_uris, created_at from oauth_clients where id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await
}

/// What the consent page agreed to, to be exchanged for a token.
pub struct NewCode<'a> {
    pub client_id: ClientId,
    pub user_id: UserId,
    pub redirect_uri: &'a str,
    pub code_challenge: &'a str,
    pub scopes: &'a [Scope],
}

/// A new code (shown once; only its digest is kept). Codes that ran out over a day ago go at
/// the same time, so the table holds only the last day's.
pub async fn create_code(pool: &PgPool, new: NewCode<'_>) -> Result<String, sqlx::Error> {
    let code = token::generate("drive_code_");
    let mut tx = pool.begin().await?;
    sqlx::query("delete from oauth_codes where expires_at < now() - interval '1 day'")
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "insert into oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, scopes, expires_at)
         values ($1, $2, $3, $4, $5, $6, now() + $7)",
    )
    .bind(token::digest(&code))
    .bind(new.client_id)
    .bind(new.user_id)
    .bind(new.redirect_uri)
    .bind(new.code_challenge)
    .bind(Scope::to_column(new.scopes))
    .bind(CODE_LIFETIME)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(code)
}

/// What the token endpoint was sent with a code.
pub struct Exchange<'a> {
    pub code: &'a str,
    pub client_id: ClientId,
    pub redirect_uri: &'a str,
    /// `BASE64URL(SHA-256(code_verifier))`, to compare with the code's challenge.
    pub challenge_of_verifier: &'a str,
}

#[derive(Debug)]
pub enum Exchanged {
    Token {
        token: NewApiToken,
        scopes: Vec<Scope>,
    },
    /// Unknown, run out, already exchanged, or not this client's, redirect or verifier.
    Refused(&'static str),
}

/// Exchanges a code for a new API token, once. A code is spent by any attempt, right or wrong
/// (a guessed verifier gets one try); a second exchange of a code that got a token revokes that
/// token, since one of the two exchanges was not the client's.
pub async fn exchange_code(pool: &PgPool, exchange: Exchange<'_>) -> Result<Exchanged, sqlx::Error> {
    let mut tx = pool.begin().await?;
    #[derive(sqlx::FromRow)]
    struct CodeRow {
        client_id: ClientId,
        user_id: UserId,
        redirect_uri: String,
        code_challenge: String,
        scopes: Vec<String>,
        live: bool,
        tried: bool,
        token_id: Option<TokenId>,
        client_name: String,
    }
    let row: Option<CodeRow> = sqlx::query_as(
        "select c.client_id, c.user_id, c.redirect_uri, c.code_challenge, c.scopes,
                c.expires_at > now() as live, c.tried, c.token_id, k.name as client_name
         from oauth_codes c join oauth_clients k on k.id = c.client_id
         where c.code_hash = $1
         for update of c",
    )
    .bind(token::digest(exchange.code))
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else {
        return Ok(Exchanged::Refused("the code is not known"));
    };
    if let Some(token_id) = row.token_id {
        tx.commit().await?;
        users::revoke_api_token(pool, token_id).await?;
        return Ok(Exchanged::Refused(
            "the code was already exchanged; the token it got is revoked",
        ));
    }
    sqlx::query("update oauth_codes set tried = true where code_hash = $1")
        .bind(token::digest(exchange.code))
        .execute(&mut *tx)
        .await?;
    let refused = if row.tried {
        Some("the code was tried already: sign in again")
    } else if !row.live {
        Some("the code has run out: sign in again")
    } else if row.client_id != exchange.client_id {
        Some("the code was given to another client")
    } else if row.redirect_uri != exchange.redirect_uri {
        Some("redirect_uri is not the one the code was given for")
    } else if row.code_challenge != exchange.challenge_of_verifier {
        Some("code_verifier does not match the code_challenge")
    } else {
        None
    };
    if let Some(why) = refused {
        tx.commit().await?;
        return Ok(Exchanged::Refused(why));
    }
    let scopes = Scope::from_column(&row.scopes);
    let token = users::create_api_token(
        &mut *tx,
        row.user_id,
        &row.client_name,
        &scopes,
        Some(row.client_id),
    )
    .await?;
    sqlx::query("update oauth_codes set token_id = $2 where code_hash = $1")
        .bind(token::digest(exchange.code))
        .bind(token.id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Exchanged::Token { token, scopes })
}

/// Revokes the live token with this secret when `client_id` got it (RFC 7009: a client
/// revokes its own token). True when one was revoked.
pub async fn revoke_client_token(
    pool: &PgPool,
    secret: &str,
    client_id: ClientId,
) -> Result<bool, sqlx::Error> {
    let token_id: Option<TokenId> = sqlx::query_scalar(
        "select id from api_tokens
         where token_hash = $1 and oauth_client_id = $2 and revoked_at is null",
    )
    .bind(token::digest(secret))
    .bind(client_id)
    .fetch_optional(pool)
    .await?;
    match token_id {
        Some(token_id) => users::revoke_api_token(pool, token_id).await,
        None => Ok(false),
    }
}

/// A client the account let in, as the account sees it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ConnectionRow {
    pub token_id: TokenId,
    pub client_id: ClientId,
    pub client_name: String,
    pub scopes: Vec<String>,
    pub created_at: DateTime<Utc>,
}

/// The account's live OAuth connections, newest first.
pub async fn connections(pool: &PgPool, user_id: UserId) -> Result<Vec<ConnectionRow>, sqlx::Error> {
    sqlx::query_as(
        "select t.id as token_id, k.id as client_id, k.name as client_name, t.scopes, t.created_at
         from api_tokens t join oauth_clients k on k.id = t.oauth_client_id
         where t.user_id = $1 and t.revoked_at is null
         order by t.created_at desc, t.id",
    )
    .bind(user_id)
    .fetch_all(pool)
    .await
}

/// Ends one of the account's connections (its token and every session of it). False when the
/// account has no live connection with that id.
pub async fn revoke_connection(
    pool: &PgPool,
    user_id: UserId,
    token_id: TokenId,
) -> Result<bool, sqlx::Error> {
    let owned: Option<TokenId> = sqlx::query_scalar(
        "select id from api_tokens
         where id = $1 and user_id = $2 and oauth_client_id is not null and revoked_at is null",
    )
    .bind(token_id)
    .bind(user_id)
    .fetch_optional(pool)
    .await?;
    match owned {
        Some(token_id) => users::revoke_api_token(pool, token_id).await,
        None => Ok(false),
    }
}
