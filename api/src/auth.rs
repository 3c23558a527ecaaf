//! Who is calling. File-service routes take a [`Caller`]: a live session token as bearer plus
//! the application header, of an API token whose scopes allow the route ([`needed_scopes`]).
//! `/generate-download-url` takes a [`MaybeCaller`], since public files may be fetched with no
//! token at all.

use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use chrono::Utc;
use drive_core::db::users;
use drive_core::id::{TokenId, UserId};
use drive_core::plan::Plan;
use drive_core::scope::Scope;

use crate::error::ApiError;
use crate::state::AppState;

pub const APP_HEADER: &str = "X-Drive-App";

#[derive(Debug, Clone)]
pub struct Caller {
    pub user_id: UserId,
    /// The API token whose session calls: what it sets up to last (an event subscription)
    /// ends with it. `None` for an account acting without a session.
    pub token_id: Option<TokenId>,
    plan: Option<Plan>,
}

impl Caller {
    /// An account acting without a session: the owner of a file request, whose `onArrival`
    /// jobs its senders' files start.
    pub fn account(user_id: UserId, plan: Option<Plan>) -> Caller {
        Caller {
            user_id,
            token_id: None,
            plan,
        }
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

/// The application header every file-service call carries, naming this drive's app. The
/// cookie routes of people's sign-ins need it too: a page of another site cannot send it
/// without asking first (CORS), and the drive answers no such asking.
pub fn check_app(headers: &HeaderMap, state: &AppState) -> Result<(), ApiError> {
    match headers.get(APP_HEADER).and_then(|v| v.to_str().ok()) {
        None => Err(ApiError::missing(APP_HEADER)),
        Some(app) if app != state.settings.app_id => Err(ApiError::forbidden(
            "app_not_allowed",
            format!("{APP_HEADER} names an unknown application"),
        )),
        Some(_) => Ok(()),
    }
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
        check_app(&parts.headers, state)?;
        let route = parts
            .extensions
            .get::<MatchedPath>()
            .map_or("", MatchedPath::as_str);
        let granted = Scope::from_column(&session.scopes);
        let allowed = match needed_scopes(route) {
            Some(scopes) => scopes.iter().all(|scope| granted.contains(scope)),
            None => granted.len() == Scope::ALL.len() && !session.app,
        };
        if !allowed {
            let needs = needed_scopes(route)
                .map_or("the account's own token (not an app's)".to_string(), |scopes| {
                    format!("the scopes {}", Scope::join(scopes).replace(' ', " and "))
                });
            return Err(ApiError::forbidden(
                "insufficient_scope",
                format!(
                    "this token may only {}: {route} needs {needs}",
                    Scope::join(&granted).replace(' ', ", ")
                ),
            ));
        }
        Ok(Caller {
            user_id: session.user_id,
            token_id: Some(session.token_id),
            plan: session.plan,
        })
    }
}

/// The scopes a route of the file service needs, all of them. `None`: the account's own token,
/// with every scope and not one an app got through OAuth — managing the account's OAuth
/// connections, and any route added without a word here, so that a new route is closed to
/// limited tokens and to apps until it is named.
///
/// A route that changes something and answers (or sets up a way to get) what is inside files
/// needs `read` as well as `write`: making a file public answers its permanent link, a review
/// links its media on a public page, a job's answer can carry its result (a checksum kept
/// from before is answered at once), and an event subscription is sent what the feed holds.
pub fn needed_scopes(route: &str) -> Option<&'static [Scope]> {
    const READ: &[Scope] = &[Scope::Read];
    const WRITE: &[Scope] = &[Scope::Write];
    const DELETE: &[Scope] = &[Scope::Delete];
    const READ_WRITE: &[Scope] = &[Scope::Read, Scope::Write];
    match route {
        "/select-user-files"
        | "/p/{id}"
        | "/search-files"
        | "/read-file"
        | "/generate-download-url"
        | "/get-user-storage-usage"
        | "/select-collections"
        | "/select-drive-events"
        | "/select-event-subscriptions"
        | "/select-file-jobs"
        | "/select-job-templates"
        | "/select-file-requests"
        | "/select-file-reviews"
        | "/select-file-views"
        | "/select-generations"
        | "/select-trashed-files"
        | "/select-file-shares"
        | "/select-shared-files"
        | "/select-profile" => Some(READ),
        "/trash-files" | "/restore-files" | "/delete-files" | "/purge-trashed-files" | "/delete-folder" => {
            Some(DELETE)
        }
        "/toggle-file-access"
        | "/set-video-thumbnail"
        | "/create-file-job"
        | "/create-archive-request"
        | "/create-file-review"
        | "/create-event-subscription" => Some(READ_WRITE),
        "/generate-file-urls"
        | "/insert-file"
        | "/create-multipart-upload"
        | "/sign-upload-parts"
        | "/complete-multipart-upload"
        | "/abort-multipart-upload"
        | "/import-from-url"
        | "/move-files"
        | "/tag-files"
        | "/update-file-tags"
        | "/update-file-description"
        | "/create-gallery"
        | "/create-playlist"
        | "/add-to-gallery"
        | "/add-to-playlist"
        | "/reorder-gallery"
        | "/reorder-playlist"
        | "/set-cover"
        | "/cancel-file-job"
        | "/retry-file-job"
        | "/create-job-template"
        | "/delete-job-template"
        | "/generate-image"
        | "/create-file-request"
        | "/set-file-request-open"
        | "/reply-to-review-note"
        | "/set-review-note-resolved"
        | "/delete-event-subscription"
        | "/rename-file"
        | "/copy-files"
        | "/move-folder"
        | "/rename-playlist"
        | "/rename-gallery"
        | "/remove-from-playlist"
        | "/remove-from-gallery"
        | "/delete-playlist"
        | "/delete-gallery"
        | "/delete-tag"
        | "/delete-file-request"
        | "/close-file-review"
        | "/share-files"
        | "/unshare-files"
        | "/update-profile" => Some(WRITE),
        _ => None,
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
