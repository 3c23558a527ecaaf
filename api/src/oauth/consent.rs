//! `/oauth/authorize`: the consent page. `GET` checks the client's request and shows who asks
//! for what; the person ticks what to allow and signs in (handle and password, or an API token); `POST` answers
//! the client's redirect URI with a code (or `access_denied`). What the client gets is never
//! more than the token that signed in may do.
//!
//! A request naming no registered client or redirect URI is answered on the page itself, never
//! by a redirect (RFC 6749 §4.1.2.1: the drive must not send people to an address nobody
//! registered); any other fault goes back to the client as an OAuth error.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use drive_core::db::oauth::{self, ClientRow, NewCode};
use drive_core::db::users;
use drive_core::id::UserId;
use drive_core::people;
use drive_core::scope::Scope;

use super::{Endpoints, check_redirect, form, one};
use crate::client::ClientAddress;
use crate::error::ApiError;
use crate::limits::Limited;
use crate::pages::{escape, html};
use crate::state::AppState;

/// What a client asked for, checked.
struct Asked {
    client: ClientRow,
    redirect: url::Url,
    /// As registered (and as the token endpoint will be sent it).
    redirect_uri: String,
    code_challenge: String,
    scopes: Vec<Scope>,
    state: Option<String>,
}

enum Refusal {
    /// Shown on the page: there is nowhere safe to send the person.
    Page(&'static str),
    /// Sent back to the client: `error`, why.
    Back(Box<url::Url>, &'static str, String),
}

const START_AGAIN: &str = "Go back to the app and start signing in again.";

/// Checks the request's parameters (the query, or the consent form's hidden fields).
async fn ask(state: &AppState, fields: &HashMap<String, Vec<String>>) -> Result<Asked, Refusal> {
    let client = match one(fields, "client_id").and_then(|id| id.parse().ok()) {
        Some(id) => match oauth::find_client(&state.db, id).await {
            Ok(client) => client,
            Err(cause) => {
                tracing::error!(%cause, "oauth: looking up a client");
                return Err(Refusal::Page(
                    "The drive could not look the app up just now. Try again in a moment.",
                ));
            }
        },
        None => None,
    };
    let Some(client) = client else {
        return Err(Refusal::Page(
            "This sign-in link names no app the drive knows. Go back to the app and start signing in again.",
        ));
    };
    let redirect_uri = match one(fields, "redirect_uri") {
        Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => uri.to_string(),
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        _ => {
            return Err(Refusal::Page(
                "This sign-in link would send you to an address the app did not register, so the drive will not. Go back to the app and start signing in again.",
            ));
        }
    };
    let Ok(redirect) = check_redirect(&redirect_uri) else {
        return Err(Refusal::Page(START_AGAIN));
    };
    let state_param = one(fields, "state").map(str::to_string);
    let back = |error: &'static str, why: &str| {
        let mut to = redirect.clone();
        to.query_pairs_mut()
            .append_pair("error", error)
            .append_pair("error_description", why);
        if let Some(s) = &state_param {
            to.query_pairs_mut().append_pair("state", s);
        }
        to.query_pairs_mut()
            .append_pair("iss", &Endpoints::of(state).issuer);
        Err(Refusal::Back(Box::new(to), error, why.to_string()))
    };
    if one(fields, "response_type") != Some("code") {
        return back("unsupported_response_type", "response_type must be code");
    }
    let challenge = one(fields, "code_challenge").unwrap_or("");
    if one(fields, "code_challenge_method") != Some("S256") {
        return back(
            "invalid_request",
            "PKCE is required: code_challenge_method must be S256",
        );
    }
    // S256's challenge is 32 bytes in unpadded base64url: always 43 characters.
    if challenge.len() != 43
        || !challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return back(
            "invalid_request",
            "code_challenge must be the S256 challenge (43 characters of base64url)",
        );
    }
    if state_param.as_ref().is_some_and(|s| s.len() > 1000) {
        return back("invalid_request", "state is longer than 1000 characters");
    }
    let scopes = match one(fields, "scope").map(Scope::parse_list) {
        None => Scope::ALL.to_vec(),
        Some(Some(scopes)) if scopes.is_empty() => Scope::ALL.to_vec(),
        Some(Some(scopes)) => scopes,
        Some(None) => return back("invalid_scope", "the scopes are read, write and delete"),
    };
    Ok(Asked {
        client,
        redirect,
        redirect_uri,
        code_challenge: challenge.to_string(),
        scopes,
        state: state_param,
    })
}

/// `GET /oauth/authorize`: the page asking the person.
pub async fn page(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    RawQuery(query): RawQuery,
) -> Response {
    if let Err(e) = state.limits.check(Limited::Anonymous, client).await {
        return e.into_response();
    }
    let Some(fields) = form(query.unwrap_or_default().as_bytes(), &[]) else {
        return problem(
            &state,
            "This sign-in link repeats a parameter, so the drive cannot tell what it asks.",
        );
    };
    match ask(&state, &fields).await {
        Ok(asked) => consent(&state, &asked, &asked.scopes, StatusCode::OK, ""),
        Err(refusal) => refuse(&state, refusal),
    }
}

/// `POST /oauth/authorize`: the person's answer.
pub async fn decide(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    body: Bytes,
) -> Response {
    if let Err(e) = state.limits.check(Limited::SignIn, client).await {
        return e.into_response();
    }
    let Some(mut fields) = form(&body, &["scope"]) else {
        return problem(&state, START_AGAIN);
    };
    // The form's ticks are in `scope`; what the client asked for rides in `asked`.
    let ticked: Vec<String> = fields.remove("scope").unwrap_or_default();
    if let Some(asked) = fields.remove("asked") {
        fields.insert("scope".into(), asked);
    }
    let asked = match ask(&state, &fields).await {
        Ok(asked) => asked,
        Err(refusal) => return refuse(&state, refusal),
    };
    let ticked: Vec<Scope> = asked
        .scopes
        .iter()
        .copied()
        .filter(|s| ticked.iter().any(|t| t == s.as_str()))
        .collect();
    if one(&fields, "decision") != Some("allow") {
        let mut to = asked.redirect.clone();
        to.query_pairs_mut()
            .append_pair("error", "access_denied")
            .append_pair("error_description", "the person did not allow it");
        return back_to(&state, to, &asked);
    }
    let (user_id, held) = match signed_in(&state, &fields).await {
        Ok(found) => found,
        Err(Err(e)) => return e.into_response(),
        Err(Ok((status, why))) => return consent(&state, &asked, &ticked, status, &why),
    };
    if ticked.is_empty() {
        let why = "Tick at least one thing to allow, or deny.";
        return consent(&state, &asked, &ticked, StatusCode::BAD_REQUEST, why);
    }
    let granted: Vec<Scope> = ticked.iter().copied().filter(|s| held.contains(s)).collect();
    if granted.is_empty() {
        let why = "Your API token may not do any of what you ticked: sign in with a token that may.";
        return consent(&state, &asked, &ticked, StatusCode::FORBIDDEN, why);
    }
    let new = NewCode {
        client_id: asked.client.id,
        user_id,
        redirect_uri: &asked.redirect_uri,
        code_challenge: &asked.code_challenge,
        scopes: &granted,
    };
    let code = match oauth::create_code(&state.db, new).await {
        Ok(code) => code,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let mut to = asked.redirect.clone();
    to.query_pairs_mut().append_pair("code", &code);
    back_to(&state, to, &asked)
}

/// Who answers the consent and what they may grant: a person by handle and password (and
/// code), who may grant everything, or an API token of their own, which grants what it may.
/// The refusal is the page's status and sentence, or a failure of the drive's.
async fn signed_in(
    state: &AppState,
    fields: &HashMap<String, Vec<String>>,
) -> Result<(UserId, Vec<Scope>), Result<(StatusCode, String), ApiError>> {
    let handle = one(fields, "handle").unwrap_or("").trim();
    if !handle.is_empty() {
        let password = one(fields, "password").unwrap_or("");
        let signed_in = people::sign_in(
            &state.db,
            &state.settings.sealer,
            state.settings.guessing,
            handle,
            password,
            one(fields, "code"),
        )
        .await
        .map_err(|e| Err(ApiError::from(e)))?;
        return match signed_in {
            Ok(user_id) => Ok((user_id, Scope::ALL.to_vec())),
            Err(refusal) => {
                let status = match refusal {
                    people::Refusal::Locked(_) => StatusCode::TOO_MANY_REQUESTS,
                    _ => StatusCode::UNAUTHORIZED,
                };
                Err(Ok((status, crate::routes::people::refused(refusal).to_string())))
            }
        };
    }
    let secret = one(fields, "api_token").unwrap_or("").trim();
    let found = users::api_token_user(&state.db, secret)
        .await
        .map_err(|e| Err(ApiError::from(e)))?;
    let Some(token) = found.filter(|_| !secret.is_empty()) else {
        let why = if secret.is_empty() {
            "Sign in with your handle and password, or an API token of this drive."
        } else {
            "That is not a live API token of this drive."
        };
        return Err(Ok((StatusCode::UNAUTHORIZED, why.to_string())));
    };
    // An app's token lets in no other app: what it let in would outlive its own revocation.
    if token.app {
        let why = "That token is one an app got: sign in with your own API token.";
        return Err(Ok((StatusCode::FORBIDDEN, why.to_string())));
    }
    Ok((token.user_id, Scope::from_column(&token.scopes)))
}

/// Sends the person back to the client, with the request's `state` and who answers (`iss`,
/// RFC 9207, so a client talking to several servers cannot be sent another's code).
fn back_to(state: &AppState, mut to: url::Url, asked: &Asked) -> Response {
    if let Some(s) = &asked.state {
        to.query_pairs_mut().append_pair("state", s);
    }
    to.query_pairs_mut()
        .append_pair("iss", &Endpoints::of(state).issuer);
    redirect(to)
}

fn redirect(to: url::Url) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(to.as_str()) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn refuse(state: &AppState, refusal: Refusal) -> Response {
    match refusal {
        Refusal::Page(why) => problem(state, why),
        Refusal::Back(to, error, why) => {
            tracing::info!(error, why, "oauth: a sign-in request was sent back");
            redirect(*to)
        }
    }
}

fn problem(state: &AppState, why: &str) -> Response {
    let body = format!(
        r#"<main class="page"><h1>This sign-in cannot go on</h1><p class="message" id="problem">{}</p></main>"#,
        escape(why)
    );
    html(state, StatusCode::BAD_REQUEST, "Sign-in", &body, None, "'none'")
}

/// The page: who asks, for what (each ticked as `ticked`), where the answer goes, and `why`
/// the last answer was not taken.
fn consent(state: &AppState, asked: &Asked, ticked: &[Scope], status: StatusCode, why: &str) -> Response {
    let name = escape(&asked.client.name);
    let hidden =
        |name: &str, value: &str| format!(r#"<input type="hidden" name="{name}" value="{}">"#, escape(value));
    let mut fields = [
        hidden("client_id", &asked.client.id.to_string()),
        hidden("redirect_uri", &asked.redirect_uri),
        hidden("response_type", "code"),
        hidden("code_challenge", &asked.code_challenge),
        hidden("code_challenge_method", "S256"),
        hidden("asked", &Scope::join(&asked.scopes)),
    ]
    .concat();
    if let Some(s) = &asked.state {
        fields.push_str(&hidden("state", s));
    }
    let choices: String = asked
        .scopes
        .iter()
        .map(|s| {
            format!(
                r#"<label class="choice"><input type="checkbox" name="scope" value="{v}" id="scope-{v}"{checked}> {what}</label>"#,
                v = s.as_str(),
                checked = if ticked.contains(s) { " checked" } else { "" },
                what = escape(s.describe()),
            )
        })
        .collect();
    let goes_to = match asked.redirect.host_str() {
        Some(host) => host.to_string(),
        None => format!("{}:", asked.redirect.scheme()),
    };
    let body = format!(
        r#"<main class="page consent">
<h1>Let <span id="client">{name}</span> use your drive?</h1>
<p class="message">The app calls itself “{name}”; the drive does not vouch for that name. After you answer you go back to <strong id="goesTo">{goes_to}</strong>.</p>
<form method="post" action="/oauth/authorize" id="consent">
{fields}
<fieldset><legend>It may</legend>
{choices}
</fieldset>
<fieldset><legend>Sign in</legend>
<label for="handle">Handle</label>
<input id="handle" name="handle" autocomplete="username" spellcheck="false">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password">
<label for="code">Code from your authenticator app, if you use one</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code">
<label for="apiToken">Or, instead, your drive API token</label>
<input type="password" id="apiToken" name="api_token" autocomplete="off" spellcheck="false">
</fieldset>
<p id="status" role="alert">{why}</p>
<button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form>
<footer>The app gets a token of its own: never more than your token may do, until you revoke it (<code>drive connections</code>).</footer>
</main>"#,
        goes_to = escape(&goes_to),
        why = escape(why),
    );
    // The answer is a redirect to the client: the form may go here and, after, there.
    let back = match asked.redirect.scheme() {
        "http" | "https" => asked.redirect.origin().ascii_serialization(),
        scheme => format!("{scheme}:"),
    };
    html(
        state,
        status,
        "Allow an app",
        &body,
        None,
        &format!("'self' {back}"),
    )
}
