//! People's sign-in, for the app: a handle and password (and an authenticator's code) open a
//! sign-in that only the browser's HttpOnly cookie holds; the page asks it for short sessions
//! (`/renew-session`) and keeps those in memory. The cookie is `SameSite=Strict` and its routes
//! want the application header as well, which no page of another site can send. An account's
//! sign-ins are listed and ended (one, or every one: "sign out everywhere"); a password is set
//! from an invitation (`drive-api admin invite`) and changed by the person; a second factor is
//! begun, confirmed with a code, and removed with the password.

use axum::extract::State;
use axum::http::header::{COOKIE, SET_COOKIE, USER_AGENT};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use drive_core::db::sign_ins::{self, SignIn};
use drive_core::db::users::{self, SESSION_LIFETIME};
use drive_core::id::{TokenId, UserId};
use drive_core::input::Line;
use drive_core::people::{self, Refusal};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{Caller, check_app};
use crate::client::ClientAddress;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::limits::Limited;
use crate::routes::auth::SessionGrant;
use crate::state::AppState;

/// The cookie a browser's sign-in rides in.
const COOKIE_NAME: &str = "drive_sign_in";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sign_in))
        .routes(routes!(accept_invitation))
        .routes(routes!(renew_session))
        .routes(routes!(sign_out))
        .routes(routes!(update_password))
        .routes(routes!(begin_totp))
        .routes(routes!(confirm_totp))
        .routes(routes!(remove_totp))
        .routes(routes!(select_sign_ins))
        .routes(routes!(end_sign_ins))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignInInput {
    handle: Line<1, 100>,
    password: String,
    /// The six digits of the account's authenticator app, when it has a second factor.
    code: Option<Line<0, 20>>,
}

/// Sign in with a handle and password (and code): sets the sign-in cookie and answers a first
/// session. Needs `X-Drive-App`.
#[utoipa::path(post, path = "/sign-in", tag = "auth", request_body = SignInInput,
    responses((status = 200, body = SessionGrant)))]
async fn sign_in(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    headers: HeaderMap,
    Json(input): Json<SignInInput>,
) -> ApiResult<Response> {
    from_the_app(&state, &headers, client).await?;
    let code = input.code.as_deref();
    let signed_in = people::sign_in(
        &state.db,
        &state.settings.sealer,
        state.settings.guessing,
        input.handle.trim(),
        &input.password,
        code,
    )
    .await?;
    let user_id = signed_in.map_err(refused)?;
    open_sign_in(&state, user_id, &headers, client).await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InvitationInput {
    /// The invitation's token, from its link.
    invitation: Line<1, 200>,
    /// The new password: 10 characters at least.
    password: String,
}

/// Set the account's password from an invitation and sign in. Needs `X-Drive-App`.
#[utoipa::path(post, path = "/accept-invitation", tag = "auth", request_body = InvitationInput,
    responses((status = 200, body = SessionGrant)))]
async fn accept_invitation(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    headers: HeaderMap,
    Json(input): Json<InvitationInput>,
) -> ApiResult<Response> {
    from_the_app(&state, &headers, client).await?;
    people::check_new_password(&input.password).map_err(|why| ApiError::invalid("password", why))?;
    let hash = people::hash(&input.password).await;
    let mut tx = state.db.begin().await?;
    let user_id = sign_ins::take_invitation(&mut *tx, input.invitation.trim())
        .await?
        .ok_or_else(|| {
            ApiError::invalid(
                "invitation",
                "the invitation is unknown, used already or expired: ask for a new one",
            )
        })?;
    sign_ins::set_password(&mut *tx, user_id, &hash).await?;
    tx.commit().await?;
    open_sign_in(&state, user_id, &headers, client).await
}

/// What every route that signs a browser in checks first: the application header, which no page
/// of another site can send, and the address's count of sign-in attempts.
async fn from_the_app(state: &AppState, headers: &HeaderMap, client: std::net::IpAddr) -> ApiResult<()> {
    check_app(headers, state)?;
    state.limits.check(Limited::SignIn, client).await
}

/// Opens a sign-in for this browser and answers its first session, with the cookie set.
async fn open_sign_in(
    state: &AppState,
    user_id: UserId,
    headers: &HeaderMap,
    client: std::net::IpAddr,
) -> ApiResult<Response> {
    let user_agent = headers
        .get(USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map_or("", |ua| &ua[..ua.floor_char_boundary(300)]);
    let opened = sign_ins::open(&state.db, user_id, user_agent, &client.to_string()).await?;
    let grant = session_of(state, opened.id).await?;
    let mut response = axum::Json(grant).into_response();
    set_cookie(state, &mut response, &opened.secret, sign_ins::IDLE.num_seconds());
    Ok(response)
}

/// A new session of the sign-in `id`.
async fn session_of(state: &AppState, id: TokenId) -> ApiResult<SessionGrant> {
    let session = users::session_for_token(&state.db, id, SESSION_LIFETIME)
        .await?
        .ok_or_else(signed_out)?;
    Ok(SessionGrant::new(session))
}

/// A new session from the browser's sign-in cookie: how the app stays signed in across
/// reloads without a script ever holding more than a session. Needs `X-Drive-App`.
#[utoipa::path(post, path = "/renew-session", tag = "auth", responses((status = 200, body = SessionGrant)))]
async fn renew_session(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    headers: HeaderMap,
) -> ApiResult<Response> {
    from_the_app(&state, &headers, client).await?;
    let id = match cookie(&headers) {
        Some(secret) => sign_ins::touch(&state.db, secret, sign_ins::IDLE).await?,
        None => None,
    };
    let Some(id) = id else {
        let mut response = signed_out().into_response();
        set_cookie(&state, &mut response, "", 0);
        return Ok(response);
    };
    Ok(axum::Json(session_of(&state, id).await?).into_response())
}

/// End this browser's sign-in (and every session it opened) and clear its cookie. Needs
/// `X-Drive-App`; answers 204 whether or not it was signed in.
#[utoipa::path(post, path = "/sign-out", tag = "auth", responses((status = 204)))]
async fn sign_out(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Response> {
    check_app(&headers, &state)?;
    if let Some(secret) = cookie(&headers) {
        sign_ins::close(&state.db, secret).await?;
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    set_cookie(&state, &mut response, "", 0);
    Ok(response)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PasswordInput {
    /// The password now (left out while the account has none).
    password: Option<String>,
    /// The new password: 10 characters at least.
    new_password: String,
}

/// Change the caller's password (the account's own token).
#[utoipa::path(post, path = "/update-password", tag = "auth", request_body = PasswordInput,
    responses((status = 204)))]
async fn update_password(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<PasswordInput>,
) -> ApiResult<StatusCode> {
    people::check_new_password(&input.new_password).map_err(|why| ApiError::invalid("newPassword", why))?;
    confirm(&state, &caller, input.password.as_deref()).await?;
    let hash = people::hash(&input.new_password).await;
    sign_ins::set_password(&state.db, caller.user_id, &hash).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The caller's password checked (a wrong one counts as a guess); an account without a
/// password yet needs none.
async fn confirm(state: &AppState, caller: &Caller, password: Option<&str>) -> ApiResult<()> {
    let has_password = sign_ins::credentials_of(&state.db, caller.user_id)
        .await?
        .password_hash
        .is_some();
    if !has_password {
        return Ok(());
    }
    let password = password.ok_or_else(|| ApiError::missing("password"))?;
    people::confirm_password(&state.db, state.settings.guessing, caller.user_id, password)
        .await?
        .map_err(refused)
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TotpBegun {
    /// The key, in base32, for typing into an authenticator app.
    secret: String,
    /// The `otpauth://` link an authenticator app takes.
    link: String,
}

/// Begin a second factor: a new key for an authenticator app, on once a code of it is
/// confirmed (`/confirm-totp`).
#[utoipa::path(post, path = "/begin-totp", tag = "auth", responses((status = 200, body = TotpBegun)))]
async fn begin_totp(State(state): State<AppState>, caller: Caller) -> ApiResult<axum::Json<TotpBegun>> {
    let issuer = format!("Drive ({})", state.storage.site_url());
    let (secret, link) =
        people::begin_totp(&state.db, &state.settings.sealer, caller.user_id, &issuer).await?;
    Ok(axum::Json(TotpBegun { secret, link }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CodeInput {
    /// The authenticator app's six digits now.
    code: Line<1, 20>,
}

/// Turn the second factor begun on, with its code now.
#[utoipa::path(post, path = "/confirm-totp", tag = "auth", request_body = CodeInput, responses((status = 204)))]
async fn confirm_totp(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CodeInput>,
) -> ApiResult<StatusCode> {
    if !people::confirm_totp(&state.db, &state.settings.sealer, caller.user_id, &input.code).await? {
        return Err(ApiError::invalid(
            "code",
            "that is not the authenticator's code now (or no second factor was begun)",
        ));
    }
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoveTotpInput {
    password: Option<String>,
}

/// Turn the second factor off, with the password.
#[utoipa::path(post, path = "/remove-totp", tag = "auth", request_body = RemoveTotpInput, responses((status = 204)))]
async fn remove_totp(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<RemoveTotpInput>,
) -> ApiResult<StatusCode> {
    confirm(&state, &caller, input.password.as_deref()).await?;
    sign_ins::remove_totp(&state.db, caller.user_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignInRecord {
    sign_in_id: TokenId,
    /// The browser it was made in, as it named itself.
    user_agent: Option<String>,
    /// The address it was made from.
    address: Option<String>,
    create_time: DateTime<Utc>,
    last_use_time: Option<DateTime<Utc>>,
    /// Whether the caller's session is this sign-in's.
    current: bool,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignIns {
    sign_ins: Vec<SignInRecord>,
}

/// The account's live sign-ins, the latest used first.
#[utoipa::path(post, path = "/select-sign-ins", tag = "auth", responses((status = 200, body = SignIns)))]
async fn select_sign_ins(State(state): State<AppState>, caller: Caller) -> ApiResult<axum::Json<SignIns>> {
    let rows = sign_ins::list(&state.db, caller.user_id, sign_ins::IDLE).await?;
    let record = |s: SignIn| SignInRecord {
        current: caller.token_id == Some(s.id),
        sign_in_id: s.id,
        user_agent: s.user_agent,
        address: s.address,
        create_time: s.created_at,
        last_use_time: s.last_used_at,
    };
    Ok(axum::Json(SignIns {
        sign_ins: rows.into_iter().map(record).collect(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EndSignInsInput {
    /// The sign-in to end; left out, every one of the account's ("sign out everywhere").
    sign_in_id: Option<TokenId>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Ended {
    ended: u64,
}

/// End one sign-in, or all of them, with every session they opened.
#[utoipa::path(post, path = "/end-sign-ins", tag = "auth", request_body = EndSignInsInput,
    responses((status = 200, body = Ended)))]
async fn end_sign_ins(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<EndSignInsInput>,
) -> ApiResult<axum::Json<Ended>> {
    let ended = sign_ins::end(&state.db, caller.user_id, input.sign_in_id).await?;
    if input.sign_in_id.is_some() && ended == 0 {
        return Err(ApiError::not_found(
            "sign_in_not_found",
            "the account has no live sign-in with that id",
        ));
    }
    Ok(axum::Json(Ended { ended }))
}

/// The refusal as the API says it.
pub(crate) fn refused(refusal: Refusal) -> ApiError {
    match refusal {
        Refusal::WrongPassword => {
            ApiError::unauthorized("wrong_password", "the handle or the password is not right")
        }
        Refusal::CodeNeeded => ApiError::unauthorized(
            "code_needed",
            "this account asks for the code of its authenticator app too",
        ),
        Refusal::WrongCode => {
            ApiError::unauthorized("wrong_code", "that is not the authenticator's code now")
        }
        Refusal::Locked(until) => ApiError::too_many(
            "too_many_guesses",
            format!(
                "too many wrong guesses: the account takes no password until {}",
                until.format("%H:%M:%S UTC")
            ),
        ),
    }
}

fn signed_out() -> ApiError {
    ApiError::unauthorized("signed_out", "this browser is not signed in: sign in again")
}

/// The sign-in secret of the request's cookie.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value)
        .filter(|value| !value.is_empty())
}

/// Sets (or, with an age of 0, clears) the sign-in cookie: never readable by a script, never
/// sent by another site's page, `Secure` where the drive is served over HTTPS.
fn set_cookie(state: &AppState, response: &mut Response, secret: &str, max_age: i64) {
    let secure = if state.storage.site_url().starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let value =
        format!("{COOKIE_NAME}={secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}");
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().append(SET_COOKIE, value);
    }
}
