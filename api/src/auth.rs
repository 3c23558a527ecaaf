//! Who is calling. File-service routes take a [`Caller`]: a live session token as bearer plus
//! the application header. `/generate-download-url` takes a [`MaybeCaller`], since public
//! files may be fetched with no token at all.

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use chrono::Utc;
use drive_core::db::users;
use drive_core::id::UserId;
use drive_core::plan::Plan;

use crate::error::ApiError;
use crate::state::AppState;

pub const APP_HEADER: &str = "X-Drive-App";

#[derive(Debug, Clone)]
pub struct Caller {
    pub user_id: UserId,
    plan: Option<Plan>,
}

impl Caller {
    /// An account acting without a session: the owner of a file request, whose `onArrival`
    /// jobs its senders' files start.
    pub fn account(user_id: UserId, plan: Option<Plan>) -> Caller {
        Caller { user_id, plan }
    }

    /// The caller's plan; 403 `no_plan` when the account has none. Adding files needs a
    /// plan; reading, moving and deleting what is already there does not.
    pub fn plan(&self) -> Result<Plan, ApiError> {
        self.plan
            .ok_or_else(|| ApiError::forbidden("no_plan", "the account has no plan"))
    }
}

/// The bearer token of a request, if it carries one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = bearer(&parts.headers).ok_or_else(|| {
            ApiError::unauthorized(
                "unauthorized",
                "sign in: send a session token as Authorization: Bearer",
            )
        })?;
        let session = users::session_user(&state.db, token)
            .await?
            .ok_or_else(|| ApiError::unauthorized("unauthorized", "the session token is not valid"))?;
        if session.expires_at <= Utc::now() {
            return Err(ApiError::unauthorized(
                "session_expired",
                "the session has expired; exchange the API token again",
            ));
        }
        match parts.headers.get(APP_HEADER).and_then(|v| v.to_str().ok()) {
            None => return Err(ApiError::missing(APP_HEADER)),
            Some(app) if app != state.settings.app_id => {
                return Err(ApiError::forbidden(
                    "app_not_allowed",
                    format!("{APP_HEADER} names an unknown application"),
                ));
            }
            Some(_) => {}
        }
        Ok(Caller {
            user_id: session.user_id,
            plan: session.plan,
        })
    }
}

/// A caller who may be anonymous: no `Authorization` header means nobody; a header that is
/// there must be a valid session.
pub struct MaybeCaller(pub Option<Caller>);

impl FromRequestParts<AppState> for MaybeCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if parts.headers.get(AUTHORIZATION).is_none() {
            return Ok(MaybeCaller(None));
        }
        Caller::from_request_parts(parts, state)
            .await
            .map(|c| MaybeCaller(Some(c)))
    }
}
