//! The spec's error body, `{ error, code, field?, retryable }`, and the one error type every
//! handler returns. Server-side causes are logged and never sent to the client.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use drive_core::access::MoveError;
use drive_core::rewrites::RewriteError;
use drive_core::storage::StorageError;
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: something in the request is missing or wrong; `field` names it.
    #[error("{message}")]
    BadRequest {
        code: &'static str,
        field: String,
        message: String,
    },
    /// 401: no session, or an expired one.
    #[error("{message}")]
    Unauthorized { code: &'static str, message: String },
    /// 403: signed in but not allowed, or the account has no plan.
    #[error("{message}")]
    Forbidden { code: &'static str, message: String },
    /// 404: nothing of the caller's has that id.
    #[error("{message}")]
    NotFound { code: &'static str, message: String },
    /// 405: the route is there, but not for this method.
    #[error("{message}")]
    MethodNotAllowed { message: String },
    /// 409: a multipart completion conflict.
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// 429: too much at once (jobs waiting, requests from one address); trying again later
    /// works.
    #[error("{message}")]
    TooMany { code: &'static str, message: String },
    /// 413: the body is over the limit.
    #[error("{message}")]
    TooLarge { message: String },
    /// 422 `unreadable`: `/read-file` cannot open the file, or it is too big to read.
    #[error("{message}")]
    Unreadable { message: String },
    /// 502: the object store failed us; trying again may work.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// 502 `generator_unavailable`: the image model's provider is not configured or not
    /// answering; trying again (later, or once it is set up) may work.
    #[error("{message}")]
    GeneratorUnavailable { message: String },
    /// 502 `fetching_file_failed`: the store did not hand a file over to `/read-file`.
    #[error("the store did not hand the file over: {cause}")]
    FetchFailed { cause: String },
    /// 500: a database failure.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// 500: this machine failed us (a process would not start, a folder could not be made).
    #[error("{0}")]
    Machine(String),
    /// 500: a handler panicked (the panic's message).
    #[error("a handler panicked: {0}")]
    Panic(String),
    /// 500: the embedding model failed on a query.
    #[error("embedding a query: {0}")]
    Embedding(String),
    /// 500: PostgreSQL wrote a moment's words or a query in a form `drive-words` does not read.
    #[error("reading words: {0}")]
    Words(#[from] drive_words::WordsError),
}

impl ApiError {
    pub fn missing(field: &str) -> ApiError {
        ApiError::BadRequest {
            code: "missing_field",
            field: field.to_string(),
            message: format!("{field} is required"),
        }
    }

    /// 400 `invalid_field`: `field` has a value the service cannot take; `why` says what
    /// it must be.
    pub fn invalid(field: &str, why: impl Into<String>) -> ApiError {
        ApiError::bad_request("invalid_field", field, why)
    }

    pub fn bad_request(code: &'static str, field: &str, message: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            code,
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub fn forbidden(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::Forbidden {
            code,
            message: message.into(),
        }
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::NotFound {
            code,
            message: message.into(),
        }
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::Conflict {
            code,
            message: message.into(),
        }
    }

    pub fn too_many(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::TooMany {
            code,
            message: message.into(),
        }
    }

    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::Unauthorized {
            code,
            message: message.into(),
        }
    }
}

/// The error body every route answers with.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// A sentence for people.
    pub error: String,
    /// A code for programs, such as `missing_field`.
    pub code: String,
    /// The offending field, on 400.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Whether trying the same request again could work.
    pub retryable: bool,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, field, retryable) = match &self {
            ApiError::BadRequest { code, field, .. } => {
                (StatusCode::BAD_REQUEST, *code, Some(field.clone()), false)
            }
            ApiError::Unauthorized { code, .. } => (StatusCode::UNAUTHORIZED, *code, None, false),
            ApiError::Forbidden { code, .. } => (StatusCode::FORBIDDEN, *code, None, false),
            ApiError::NotFound { code, .. } => (StatusCode::NOT_FOUND, *code, None, false),
            ApiError::MethodNotAllowed { .. } => {
                (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", None, false)
            }
            ApiError::Conflict { code, .. } => (StatusCode::CONFLICT, *code, None, false),
            ApiError::TooMany { code, .. } => (StatusCode::TOO_MANY_REQUESTS, *code, None, true),
            ApiError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", None, false),
            ApiError::Unreadable { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "unreadable", None, false),
            ApiError::Storage(cause) => {
                tracing::warn!(%cause, "storage unavailable");
                (StatusCode::BAD_GATEWAY, "storage_unavailable", None, true)
            }
            ApiError::GeneratorUnavailable { .. } => {
                (StatusCode::BAD_GATEWAY, "generator_unavailable", None, true)
            }
            ApiError::FetchFailed { cause } => {
                tracing::warn!(%cause, "the store did not hand a file over to be read");
                (StatusCode::BAD_GATEWAY, "fetching_file_failed", None, true)
            }
            ApiError::Machine(cause) => {
                tracing::error!(%cause, "machine failure");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal", None, true)
            }
            ApiError::Database(cause) if database_unreachable(cause) => {
                tracing::warn!(%cause, "database unavailable");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "database_unavailable",
                    None,
                    true,
                )
            }
            ApiError::Database(cause) => {
                tracing::error!(%cause, "database failure");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal", None, true)
            }
            ApiError::Panic(message) => {
                tracing::error!(panic = %message, "a handler panicked");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal", None, true)
            }
            ApiError::Embedding(cause) => {
                tracing::error!(%cause, "embedding failure");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal", None, true)
            }
            ApiError::Words(cause) => {
                tracing::error!(%cause, "words unreadable");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal", None, true)
            }
        };
        let error = match &self {
            ApiError::Storage(_) => "Storage is unavailable right now; try again.".to_string(),
            ApiError::Database(cause) if database_unreachable(cause) => {
                "The database is unavailable right now; try again.".to_string()
            }
            ApiError::FetchFailed { .. } => "Storage did not hand the file over; try again.".to_string(),
            ApiError::Database(_)
            | ApiError::Panic(_)
            | ApiError::Machine(_)
            | ApiError::Embedding(_)
            | ApiError::Words(_) => "Something went wrong on our side; try again.".to_string(),
            other => other.to_string(),
        };
        let body = ErrorBody {
            error,
            code: code.to_string(),
            field,
            retryable,
        };
        (status, Json(body)).into_response()
    }
}

impl From<MoveError> for ApiError {
    fn from(e: MoveError) -> ApiError {
        match e {
            MoveError::NotFound => ApiError::not_found("file_not_found", e.to_string()),
            MoveError::Trashed => ApiError::bad_request("file_trashed", "id", e.to_string()),
            MoveError::Busy => ApiError::too_many("file_busy", e.to_string()),
            MoveError::NameTaken(_) => ApiError::conflict("file_name_taken", e.to_string()),
            MoveError::Storage(e) => ApiError::Storage(e),
            MoveError::Database(e) => ApiError::Database(e),
        }
    }
}

impl From<RewriteError> for ApiError {
    fn from(e: RewriteError) -> ApiError {
        match e {
            RewriteError::Storage(e) => ApiError::Storage(e),
            RewriteError::Database(e) => ApiError::Database(e),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// Whether the database could not be reached (no connection to be had, or the one in use was
/// cut), as against a query that failed: the first passes with time, so it is a 503.
fn database_unreachable(cause: &sqlx::Error) -> bool {
    matches!(
        cause,
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Tls(_)
    )
}
