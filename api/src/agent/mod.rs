//! The agent interface: A2A 1.0 over JSON-RPC 2.0 at `/a2a` (and `/a2a/`), and the agent card
//! at `/.well-known/agent-card.json`. A caller signs in with an API token as bearer (its own,
//! or one an app got through OAuth, `crate::oauth`), or, from the drive's own app (with
//! `X-Drive-App`), with the app's session; every task it starts is that token's, and
//! its tools can do only what the token's scopes allow. Tasks are run by the worker farm (`drive-worker`'s `agent`): the
//! API only records them, answers about them, and cancels them. The wire rules (ProtoJSON,
//! errors with their `ErrorInfo`, the version header) are those `docs/a2a-1.0-brief.md`
//! gathers from the A2A v1.0.0 proto.

mod push;
mod tasks;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::Utc;
use drive_core::db::users::{self, TokenUser};
use drive_core::scope::Scope;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::auth::{APP_HEADER, bearer, check_app};
use crate::error::ApiError;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/.well-known/agent-card.json", get(card))
        .route("/a2a", post(rpc))
        .route("/a2a/", post(rpc))
}

/// The protocol version this interface speaks (`A2A-Version`, major and minor).
const VERSION: &str = "1.0";

/// The agent card: who the agent is, where and how to call it. Served to anyone, cached for at
/// most five minutes, with an `ETag` (its digest): a client asking `If-None-Match` with it is
/// answered 304.
async fn card(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let site = state.storage.site_url().trim_end_matches('/');
    let oauth = crate::oauth::Endpoints::of(&state);
    let scopes: serde_json::Map<String, Value> = Scope::ALL
        .iter()
        .map(|s| (s.as_str().to_string(), Value::String(s.describe().to_string())))
        .collect();
    let description = format!(
        "Works your drive for you: finds files, reads their details and hands out links, acting only as \
         the API token that asks. A blocking SendMessage answers at the task's end, or early, the task \
         still working and its status message saying why, when the task begins to wait for something or \
         after {} seconds: follow it with GetTask.",
        state.settings.agent_answer_within.as_secs()
    );
    let card = json!({
        "name": "Drive",
        "description": description,
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [
            { "url": format!("{site}/a2a"), "protocolBinding": "JSONRPC", "protocolVersion": VERSION }
        ],
        "capabilities": { "streaming": false, "pushNotifications": true, "extendedAgentCard": false },
        "defaultInputModes": drive_core::a2a::input_modes(),
        "defaultOutputModes": ["text/plain"],
        "skills": [{
            "id": "drive",
            "name": "Your drive",
            "description": "Finds, links, zips, moves, tags and trashes your files, and waits for things to happen: files sent to a request, notes on a review, a file opened, files landing in a folder, an image or a job finishing.",
            "tags": ["files", "storage", "links", "waits"],
            "examples": ["Give me a link to the newest PDF in /invoices", "When files land in /inbox, tag them inbox"]
        }],
        "securitySchemes": {
            "apiToken": { "httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "description": "A drive API token (drive-api admin create-token); the tasks it starts are its own."
            } },
            "oauth": { "oauth2SecurityScheme": {
                "description": "Sign in through the drive's consent page; the token the app gets may do what the person allowed, and the tasks it starts are its own.",
                "flows": { "authorizationCode": {
                    "authorizationUrl": oauth.authorize,
                    "tokenUrl": oauth.token,
                    "scopes": scopes,
                    "pkceRequired": true
                } },
                "oauth2MetadataUrl": oauth.metadata
            } }
        },
        "securityRequirements": [
            { "schemes": { "apiToken": { "list": [] } } },
            { "schemes": { "oauth": { "list": ["read"] } } }
        ]
    });
    let body = serde_json::to_vec(&card).expect("a card is JSON");
    let etag = format!("\"{}\"", hex::encode(&Sha256::digest(&body)[..16]));
    // Weak comparison (RFC 9110 §13.1.2): `W/` is ignored, `*` matches.
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|given| {
            given
                .split(',')
                .map(|tag| tag.trim().trim_start_matches("W/"))
                .any(|tag| tag == etag || tag == "*")
        });
    let cache = [
        (header::CACHE_CONTROL, "public, max-age=300".to_string()),
        (header::ETAG, etag),
    ];
    if unchanged {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (cache, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A JSON-RPC error, with the A2A `ErrorInfo` (and, for a parameter, the `BadRequest` naming
/// it) in `data`.
#[derive(Debug)]
pub struct RpcError {
    code: i64,
    message: String,
    reason: Option<&'static str>,
    metadata: serde_json::Map<String, Value>,
    field: Option<String>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            reason: None,
            metadata: serde_json::Map::new(),
            field: None,
        }
    }

    fn a2a(code: i64, reason: &'static str, message: impl Into<String>) -> RpcError {
        RpcError {
            reason: Some(reason),
            ..RpcError::new(code, message)
        }
    }

    /// -32602: `field` is missing or wrong, `why` says how.
    pub fn invalid(field: &str, why: impl Into<String>) -> RpcError {
        let why = why.into();
        RpcError {
            field: Some(field.to_string()),
            ..RpcError::new(-32602, format!("{field}: {why}"))
        }
    }

    /// -32001: no task of the caller's has that id.
    pub fn task_not_found(id: &str) -> RpcError {
        let mut error = RpcError::a2a(-32001, "TASK_NOT_FOUND", "no task of yours has that id");
        error
            .metadata
            .insert("taskId".into(), Value::String(id.to_string()));
        error
    }

    pub fn not_cancelable(id: &str) -> RpcError {
        let mut error = RpcError::a2a(-32002, "TASK_NOT_CANCELABLE", "the task has already ended");
        error
            .metadata
            .insert("taskId".into(), Value::String(id.to_string()));
        error
    }

    /// -32005: a part of a media type the agent does not take; says which part, and what the
    /// agent takes (its card's `defaultInputModes`).
    pub fn part_type_not_supported(index: usize, media_type: &str) -> RpcError {
        let mut error = RpcError::a2a(
            -32005,
            "CONTENT_TYPE_NOT_SUPPORTED",
            format!(
                "message.parts[{index}]: this agent does not take {media_type}; it takes text, JSON data, and files \
                 of the types its card's defaultInputModes names (application/octet-stream for any bytes)"
            ),
        );
        error
            .metadata
            .insert("mediaType".into(), Value::String(media_type.to_string()));
        error
    }

    pub fn unsupported(why: impl Into<String>) -> RpcError {
        RpcError::a2a(-32004, "UNSUPPORTED_OPERATION", why)
    }

    /// -32000 (JSON-RPC's range for a server's own errors; A2A names none for this): the token
    /// has the most tasks under way at once.
    pub fn too_many_tasks() -> RpcError {
        RpcError::new(
            -32000,
            format!(
                "this token has {} tasks under way, the most at once: wait for one to end, or cancel one",
                drive_core::db::agent_tasks::MAX_UNFINISHED
            ),
        )
    }

    pub fn internal(cause: impl std::fmt::Display) -> RpcError {
        tracing::error!("agent interface: {cause}");
        RpcError::new(-32603, "Internal error")
    }

    fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        let mut data = Vec::new();
        if let Some(reason) = self.reason {
            data.push(json!({
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "a2a-protocol.org",
                "metadata": self.metadata,
            }));
        }
        if let Some(field) = &self.field {
            data.push(json!({
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{ "field": field, "description": self.message }],
            }));
        }
        if !data.is_empty() {
            error["data"] = Value::Array(data);
        }
        error
    }
}

impl From<sqlx::Error> for RpcError {
    fn from(e: sqlx::Error) -> RpcError {
        RpcError::internal(e)
    }
}

/// What answers a call: a result or an error, echoing the request's id. JSON-RPC errors go out
/// with HTTP 200, as A2A's clients expect.
fn answer(id: &Value, outcome: Result<Value, RpcError>) -> Response {
    let body = match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() }),
    };
    axum::Json(body).into_response()
}

/// One JSON-RPC call: the caller's token, then the request's shape, version and method.
async fn rpc(
    State(state): State<AppState>,
    Query(query): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(caller) => caller,
        Err(refused) => {
            let mut response = refused.into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return response;
        }
    };
    let sent_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    if sent_type.is_some_and(|t| {
        !t.trim_start()
            .to_ascii_lowercase()
            .starts_with("application/json")
    }) {
        let error = RpcError::a2a(
            -32005,
            "CONTENT_TYPE_NOT_SUPPORTED",
            "send the request as application/json",
        );
        return answer(&Value::Null, Err(error));
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return answer(&Value::Null, Err(RpcError::new(-32700, "Invalid JSON payload")));
    };
    let id = match request.get("id") {
        None => Value::Null,
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id.clone(),
        Some(_) => {
            return answer(
                &Value::Null,
                Err(envelope("id must be a string, a number or null")),
            );
        }
    };
    let (Some("2.0"), Some(method)) = (
        request.get("jsonrpc").and_then(Value::as_str),
        request.get("method").and_then(Value::as_str),
    ) else {
        return answer(
            &id,
            Err(envelope(
                "a request is an object with jsonrpc \"2.0\" and a method",
            )),
        );
    };
    let version = headers
        .get("A2A-Version")
        .and_then(|v| v.to_str().ok())
        .or(query.get("A2A-Version").map(String::as_str))
        .unwrap_or("");
    if !speaks(version) {
        let mut error = RpcError::a2a(
            -32009,
            "VERSION_NOT_SUPPORTED",
            format!("this agent speaks A2A {VERSION}: send the header A2A-Version: {VERSION}"),
        );
        error
            .metadata
            .insert("version".into(), Value::String(version.to_string()));
        return answer(&id, Err(error));
    }
    let params = match request.get("params") {
        None | Some(Value::Null) => json!({}),
        Some(params @ Value::Object(_)) => params.clone(),
        Some(_) => return answer(&id, Err(RpcError::invalid("params", "must be an object"))),
    };
    let outcome = match method {
        "SendMessage" => tasks::send_message(&state, &caller, params).await,
        "GetTask" => tasks::get_task(&state, &caller, params).await,
        "ListTasks" => tasks::list_tasks(&state, &caller, params).await,
        "CancelTask" => tasks::cancel_task(&state, &caller, params).await,
        "CreateTaskPushNotificationConfig" => push::create(&state, &caller, params).await,
        "GetTaskPushNotificationConfig" => push::get(&state, &caller, params).await,
        "ListTaskPushNotificationConfigs" => push::list(&state, &caller, params).await,
        "DeleteTaskPushNotificationConfig" => push::delete(&state, &caller, params).await,
        "SendStreamingMessage" | "SubscribeToTask" => Err(RpcError::unsupported(
            "this agent does not stream: call SendMessage, then GetTask",
        )),
        "GetExtendedAgentCard" => Err(RpcError::unsupported("this agent has no extended card")),
        other => Err(RpcError::new(-32601, format!("Method not found: {other}"))),
    };
    answer(&id, outcome)
}

fn envelope(why: &str) -> RpcError {
    RpcError::new(-32600, format!("Request payload validation error: {why}"))
}

/// Whether an `A2A-Version` is this interface's: its major and minor (a patch does not count).
fn speaks(version: &str) -> bool {
    let mut parts = version.trim().split('.');
    matches!((parts.next(), parts.next()), (Some("1"), Some("0")))
        && parts.all(|patch| patch.chars().all(|c| c.is_ascii_digit()) && !patch.is_empty())
}

/// The caller's live API token.
async fn signed_in(state: &AppState, headers: &HeaderMap) -> Result<TokenUser, ApiError> {
    let secret = bearer(headers).ok_or_else(|| {
        ApiError::unauthorized(
            "unauthorized",
            "sign in: send an API token as Authorization: Bearer",
        )
    })?;
    if let Some(token) = users::api_token_user(&state.db, secret).await? {
        return Ok(token);
    }
    // The drive's own app asks with the short session it holds (it never sees its sign-in's
    // secret): the task is then the sign-in's, or the API token's the tab signed in with.
    if headers.contains_key(APP_HEADER) {
        check_app(headers, state)?;
        if let Some(session) = users::session_user(&state.db, secret).await?
            && session.expires_at > Utc::now()
        {
            return Ok(TokenUser {
                user_id: session.user_id,
                token_id: session.token_id,
                scopes: session.scopes,
                app: session.app,
            });
        }
    }
    Err(ApiError::unauthorized(
        "unauthorized",
        "the API token is not valid",
    ))
}

/// A method's params as `T`; what does not fit is -32602 naming where.
fn params<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { "params".to_string() } else { path };
        RpcError::invalid(&field, e.inner().to_string())
    })
}

#[cfg(test)]
mod unit {
    #[test]
    fn the_version_is_major_and_minor_whatever_the_patch() {
        for ok in ["1.0", "1.0.0", " 1.0.3"] {
            assert!(super::speaks(ok), "{ok}");
        }
        for not in ["", "0.3", "1", "1.1", "99.0", "1.0.x", "1.0."] {
            assert!(!super::speaks(not), "{not}");
        }
    }
}
