//! OAuth sign-in for agents and tool clients: the authorization-code flow with PKCE (S256 only),
//! public clients that register themselves, and revocation. The endpoints speak OAuth's own
//! wire format (RFC 6749, 7591, 7636, 7009, 8414, 9207), not the file service's error body,
//! since OAuth client libraries are what call them:
//!
//! - `GET /.well-known/oauth-authorization-server`: the metadata (RFC 8414);
//! - `POST /oauth/register`: a client names itself and its redirect URIs (RFC 7591);
//! - `GET`/`POST /oauth/authorize`: the consent page ([`consent`]);
//! - `POST /oauth/token`: a code and its verifier for an API token limited to the scopes the
//!   person allowed (no expiry, no refresh: it lasts until revoked);
//! - `POST /oauth/revoke`: a client gives its token back (RFC 7009).
//!
//! The token is an API token like any other (`api_tokens`, its `oauth_client_id` set): it is
//! exchanged for sessions, starts agent tasks as itself, and its owner lists and revokes it with
//! `/select-connections` and `/revoke-connection`.

mod consent;

use std::collections::HashMap;
use std::net::IpAddr;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use drive_core::db::oauth::{self, Exchange, Exchanged};
use drive_core::id::ClientId;
use drive_core::scope::Scope;
use serde_json::{Value, json};

use crate::client::ClientAddress;
use crate::limits::Limited;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/oauth/register", post(register))
        .route("/oauth/authorize", get(consent::page).post(consent::decide))
        .route("/oauth/token", post(token))
        .route("/oauth/revoke", post(revoke))
}

/// Where the endpoints are, under the drive's site.
pub struct Endpoints {
    pub issuer: String,
    pub authorize: String,
    pub token: String,
    pub metadata: String,
}

impl Endpoints {
    pub fn of(state: &AppState) -> Endpoints {
        let site = state.storage.site_url().trim_end_matches('/');
        Endpoints {
            issuer: site.to_string(),
            authorize: format!("{site}/oauth/authorize"),
            token: format!("{site}/oauth/token"),
            metadata: format!("{site}/.well-known/oauth-authorization-server"),
        }
    }
}

/// The authorization server's metadata (RFC 8414).
async fn metadata(State(state): State<AppState>) -> Response {
    let at = Endpoints::of(&state);
    let site = &at.issuer;
    let document = json!({
        "issuer": site,
        "authorization_endpoint": at.authorize,
        "token_endpoint": at.token,
        "registration_endpoint": format!("{site}/oauth/register"),
        "revocation_endpoint": format!("{site}/oauth/revoke"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": Scope::ALL.map(Scope::as_str),
        "authorization_response_iss_parameter_supported": true,
        "service_documentation": format!("{site}/openapi.json"),
    });
    (
        [(header::CACHE_CONTROL, "public, max-age=300")],
        axum::Json(document),
    )
        .into_response()
}

/// An OAuth error (RFC 6749 §5.2): `error` a code the RFC names, `error_description` why.
fn refused(status: StatusCode, error: &str, why: impl Into<String>) -> Response {
    let body = json!({ "error": error, "error_description": why.into() });
    (status, no_store(), axum::Json(body)).into_response()
}

fn no_store() -> [(header::HeaderName, &'static str); 2] {
    [(header::CACHE_CONTROL, "no-store"), (header::PRAGMA, "no-cache")]
}

/// Registrations and exchanges count against the per-address sign-in limit.
async fn limited(state: &AppState, client: IpAddr) -> Result<(), Response> {
    state.limits.check(Limited::SignIn, client).await.map_err(|e| {
        refused(
            StatusCode::TOO_MANY_REQUESTS,
            "temporarily_unavailable",
            e.to_string(),
        )
    })
}

/// The most redirect URIs a client may register, and the longest each may be.
const MOST_REDIRECTS: usize = 10;
const LONGEST_URI: usize = 2000;

/// A client registers itself (RFC 7591). Every client is public: it proves itself with PKCE,
/// not a secret, so it is registered with `token_endpoint_auth_method` `none` whatever it asked.
async fn register(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    body: Bytes,
) -> Response {
    if let Err(slow) = limited(&state, client).await {
        return slow;
    }
    let metadata = |why: String| refused(StatusCode::BAD_REQUEST, "invalid_client_metadata", why);
    let Ok(Value::Object(asked)) = serde_json::from_slice::<Value>(&body) else {
        return metadata("the body must be a JSON object".into());
    };
    let name = match asked.get("client_name") {
        None | Some(Value::Null) => "An unnamed client".to_string(),
        Some(Value::String(name))
            if (1..=100).contains(&name.trim().chars().count()) && !name.chars().any(disguises) =>
        {
            name.trim().to_string()
        }
        Some(_) => {
            return metadata(
                "client_name must be 1 to 100 characters, none of them control or direction characters"
                    .into(),
            );
        }
    };
    let uris: Vec<String> = match asked.get("redirect_uris") {
        Some(Value::Array(uris)) if (1..=MOST_REDIRECTS).contains(&uris.len()) => {
            match uris.iter().map(|u| u.as_str().map(str::to_string)).collect() {
                Some(uris) => uris,
                None => return metadata("redirect_uris must be a list of text".into()),
            }
        }
        _ => {
            return metadata(format!(
                "redirect_uris must list 1 to {MOST_REDIRECTS} redirect URIs"
            ));
        }
    };
    for uri in &uris {
        if let Err(why) = check_redirect(uri) {
            return refused(
                StatusCode::BAD_REQUEST,
                "invalid_redirect_uri",
                format!("{uri}: {why}"),
            );
        }
    }
    // What the client would like beyond the one flow offered (a refresh grant, a secret) is
    // replaced by what it gets (RFC 7591 §3.2.1: the answer says what was registered); a
    // client that cannot use the authorization-code flow at all is refused.
    let includes = |field: &str, wanted: &str| match asked.get(field) {
        None | Some(Value::Null) => true,
        Some(Value::Array(list)) => list.iter().any(|v| v.as_str() == Some(wanted)),
        Some(_) => false,
    };
    if !includes("grant_types", "authorization_code") || !includes("response_types", "code") {
        return metadata("only the authorization_code grant (response type code) is offered".into());
    }
    let client = match oauth::register_client(&state.db, &name, &uris).await {
        Ok(client) => client,
        Err(e) => return server_error(e),
    };
    let body = json!({
        "client_id": client.id,
        "client_id_issued_at": client.created_at.timestamp(),
        "client_name": client.name,
        "redirect_uris": client.redirect_uris,
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
    });
    (StatusCode::CREATED, no_store(), axum::Json(body)).into_response()
}

/// Characters that would let an app's name pass for another's where it is shown (a terminal's
/// escapes, text direction overrides): control characters and Unicode's direction formatting.
fn disguises(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether a client may be sent back to `uri`: https anywhere, http only to this machine
/// (RFC 8252's loopback redirect, for tools on the person's own computer), or an app's own
/// scheme, named like a reversed domain (`com.example.app:/done`). No fragment, no credentials.
pub fn check_redirect(uri: &str) -> Result<url::Url, &'static str> {
    if uri.len() > LONGEST_URI {
        return Err("longer than 2000 characters");
    }
    let url = url::Url::parse(uri).map_err(|_| "not an absolute URI")?;
    if url.fragment().is_some() {
        return Err("a redirect URI has no fragment");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("a redirect URI carries no credentials");
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" => match url.host() {
            Some(url::Host::Domain("localhost")) => Ok(url),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(url),
            Some(url::Host::Ipv6(ip)) if IpAddr::V6(ip).is_loopback() => Ok(url),
            _ => Err("http is only for this machine's loopback (127.0.0.1, [::1], localhost); use https"),
        },
        scheme if scheme.contains('.') => Ok(url),
        _ => Err("use https, http on loopback, or an app scheme named like a reversed domain"),
    }
}

/// A form body (`application/x-www-form-urlencoded`) as its fields; `None` when a field is
/// sent twice (RFC 6749 §3.1: parameters must not repeat), except those in `lists`.
fn form(body: &[u8], lists: &[&str]) -> Option<HashMap<String, Vec<String>>> {
    let mut fields: HashMap<String, Vec<String>> = HashMap::new();
    for (name, value) in url::form_urlencoded::parse(body) {
        let list = lists.contains(&name.as_ref());
        let values = fields.entry(name.into_owned()).or_default();
        if !values.is_empty() && !list {
            return None;
        }
        values.push(value.into_owned());
    }
    Some(fields)
}

fn one<'a>(fields: &'a HashMap<String, Vec<String>>, name: &str) -> Option<&'a str> {
    fields.get(name).and_then(|v| v.first()).map(String::as_str)
}

/// The token endpoint: a code, the verifier of its challenge, the client and redirect it was
/// given for, for an API token.
async fn token(State(state): State<AppState>, ClientAddress(client): ClientAddress, body: Bytes) -> Response {
    if let Err(slow) = limited(&state, client).await {
        return slow;
    }
    let invalid = |why: &str| refused(StatusCode::BAD_REQUEST, "invalid_request", why);
    let Some(fields) = form(&body, &[]) else {
        return invalid("a parameter is sent twice");
    };
    match one(&fields, "grant_type") {
        Some("authorization_code") => {}
        Some(_) => {
            return refused(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "only authorization_code is offered",
            );
        }
        None => return invalid("grant_type is missing"),
    }
    let (Some(code), Some(redirect_uri), Some(client_id), Some(verifier)) = (
        one(&fields, "code"),
        one(&fields, "redirect_uri"),
        one(&fields, "client_id"),
        one(&fields, "code_verifier"),
    ) else {
        return invalid("send code, redirect_uri, client_id and code_verifier");
    };
    let Ok(client_id) = client_id.parse::<ClientId>() else {
        return refused(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "no client has that client_id",
        );
    };
    if !verifier_is_well_formed(verifier) {
        return invalid("code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, -, ., _ and ~");
    }
    let exchange = Exchange {
        code,
        client_id,
        redirect_uri,
        challenge_of_verifier: &drive_core::token::pkce_challenge(verifier),
    };
    match oauth::exchange_code(&state.db, exchange).await {
        Ok(Exchanged::Token { token, scopes }) => {
            let body = json!({
                "access_token": token.secret,
                "token_type": "Bearer",
                "scope": Scope::join(&scopes),
            });
            (StatusCode::OK, no_store(), axum::Json(body)).into_response()
        }
        Ok(Exchanged::Refused(why)) => refused(StatusCode::BAD_REQUEST, "invalid_grant", why),
        Err(e) => server_error(e),
    }
}

/// RFC 7636 §4.1: 43 to 128 unreserved characters.
fn verifier_is_well_formed(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// A client gives back a token it got (RFC 7009). Answered 200 whether or not there was such
/// a token: the answer tells nothing about other clients' tokens.
async fn revoke(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    body: Bytes,
) -> Response {
    if let Err(slow) = limited(&state, client).await {
        return slow;
    }
    let Some(fields) = form(&body, &[]) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "a parameter is sent twice",
        );
    };
    let (Some(token), Some(client_id)) = (one(&fields, "token"), one(&fields, "client_id")) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "send token and client_id",
        );
    };
    let Ok(client_id) = client_id.parse::<ClientId>() else {
        return refused(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "no client has that client_id",
        );
    };
    match oauth::revoke_client_token(&state.db, token, client_id).await {
        Ok(_) => (StatusCode::OK, no_store()).into_response(),
        Err(e) => server_error(e),
    }
}

fn server_error(cause: sqlx::Error) -> Response {
    tracing::error!(%cause, "oauth: the database failed");
    refused(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        "the drive failed; try again",
    )
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn redirects_go_to_https_loopback_http_or_an_apps_own_scheme() {
        for ok in [
            "https://client.example/callback",
            "https://client.example/cb?x=1",
            "http://127.0.0.1:53682/callback",
            "http://[::1]:8080/",
            "http://localhost/cb",
            "com.example.app:/oauth",
        ] {
            assert!(check_redirect(ok).is_ok(), "{ok}");
        }
        for not in [
            "http://client.example/callback",
            "http://10.0.0.1/cb",
            "https://client.example/cb#frag",
            "https://user:pw@client.example/cb",
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "/relative",
            "",
        ] {
            assert!(check_redirect(not).is_err(), "{not}");
        }
    }

    #[test]
    fn a_form_field_sent_twice_is_refused_unless_it_is_a_list() {
        assert!(form(b"a=1&a=2", &[]).is_none());
        let fields = form(b"scope=read&scope=write&b=x%20y", &["scope"]).unwrap();
        assert_eq!(fields["scope"], ["read", "write"]);
        assert_eq!(one(&fields, "b"), Some("x y"));
    }

    #[test]
    fn verifiers_are_43_to_128_unreserved_characters() {
        assert!(verifier_is_well_formed(&"a".repeat(43)));
        assert!(verifier_is_well_formed(&"Az09-._~".repeat(16)));
        assert!(!verifier_is_well_formed(&"a".repeat(42)));
        assert!(!verifier_is_well_formed(&"a".repeat(129)));
        assert!(!verifier_is_well_formed(&format!("{}+", "a".repeat(43))));
    }
}
