//! The apps an account let in through OAuth (`crate::oauth`), each with the token it got:
//! listed, and revoked one by one. Only the account's own token (every scope, not an app's) may
//! manage them, so an app cannot see or end the others.

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::oauth;
use drive_core::id::{ClientId, TokenId};
use drive_core::scope::Scope;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(select_connections))
        .routes(routes!(revoke_connection))
}

/// An app the account let in.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    /// The id of the token the app holds.
    id: TokenId,
    client_id: ClientId,
    /// The name the app registered with (the drive does not vouch for it).
    client_name: String,
    /// What the app may do.
    scopes: Vec<Scope>,
    insert_time: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Connections {
    /// Newest first.
    connections: Vec<Connection>,
}

/// The apps you let in through OAuth, with what each may do.
#[utoipa::path(post, path = "/select-connections", tag = "auth", responses((status = 200, body = Connections)))]
async fn select_connections(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<axum::Json<Connections>> {
    let rows = oauth::connections(&state.db, caller.user_id).await?;
    let connections = rows
        .into_iter()
        .map(|row| Connection {
            id: row.token_id,
            client_id: row.client_id,
            client_name: row.client_name,
            scopes: Scope::from_column(&row.scopes),
            insert_time: row.created_at,
        })
        .collect();
    Ok(axum::Json(Connections { connections }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevokeConnectionInput {
    /// A connection's `id`.
    connection_id: TokenId,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Revoked {
    revoked: bool,
}

/// End an app's access: its token and every session of it stop at once.
#[utoipa::path(post, path = "/revoke-connection", tag = "auth", request_body = RevokeConnectionInput,
    responses((status = 200, body = Revoked)))]
async fn revoke_connection(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<RevokeConnectionInput>,
) -> ApiResult<axum::Json<Revoked>> {
    if !oauth::revoke_connection(&state.db, caller.user_id, input.connection_id).await? {
        return Err(ApiError::not_found(
            "connection_not_found",
            "no app you let in holds a token with that id",
        ));
    }
    Ok(axum::Json(Revoked { revoked: true }))
}
