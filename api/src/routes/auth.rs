//! `POST {auth_url}/exchange-token`: a long-lived API token buys a one-day session.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use drive_core::db::users::{self, SESSION_LIFETIME};
use drive_core::id::UserId;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::bearer;
use crate::client::ClientAddress;
use crate::error::{ApiError, ApiResult};
use crate::limits::Limited;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(exchange_token))
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionGrant {
    /// The session token: send it as `Authorization: Bearer` to the file service.
    gel_token: String,
    /// Seconds until the session ends (86400).
    expires_in: i64,
    /// Object keys of new files begin `users/{userId}/`.
    user_id: UserId,
}

impl SessionGrant {
    pub fn new(session: users::Session) -> SessionGrant {
        SessionGrant {
            gel_token: session.token,
            expires_in: SESSION_LIFETIME.num_seconds(),
            user_id: session.user_id,
        }
    }
}

/// Exchange an API token (as bearer) for a session token.
#[utoipa::path(post, path = "/exchange-token", tag = "auth", responses((status = 200, body = SessionGrant)))]
async fn exchange_token(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    headers: HeaderMap,
) -> ApiResult<Json<SessionGrant>> {
    state.limits.check(Limited::SignIn, client).await?;
    let api_token = bearer(&headers).ok_or_else(|| {
        ApiError::unauthorized("unauthorized", "send the API token as Authorization: Bearer")
    })?;
    let session = users::exchange(&state.db, api_token)
        .await?
        .ok_or_else(|| ApiError::unauthorized("unauthorized", "the API token is unknown or revoked"))?;
    Ok(Json(SessionGrant::new(session)))
}
