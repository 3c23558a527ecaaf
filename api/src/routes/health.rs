//! Health for operators and their orchestrators, no credentials: `GET /healthz`, the process
//! is up and serving; `GET /readyz`, it can do its work: the database and the object store each
//! answer within two seconds (503 `not_ready` naming what did not). Redis is left out: without it
//! the API still serves everything (the rate limits count in memory, the workers find new jobs by
//! their poll rather than the doorbell), and a Redis outage must not take every API process out
//! of its balancer at once.

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::client::ClientAddress;
use crate::error::ErrorBody;
use crate::limits::Limited;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
}

/// How long each dependency has to answer.
const PATIENCE: Duration = Duration::from_secs(2);

#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `up` or `ready`.
    status: &'static str,
}

/// The process is up and serving.
#[utoipa::path(get, path = "/healthz", tag = "health", security(()),
    responses((status = 200, body = Health)))]
async fn healthz() -> axum::Json<Health> {
    axum::Json(Health { status: "up" })
}

/// The database and the object store both answer.
#[utoipa::path(get, path = "/readyz", tag = "health", security(()),
    responses((status = 200, body = Health), (status = 503, body = ErrorBody, description = "`not_ready`: what did not answer")))]
async fn readyz(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
) -> Result<axum::Json<Health>, Response> {
    // Each look asks two services: anonymous callers' per-address limit applies.
    state
        .limits
        .check(Limited::Anonymous, client)
        .await
        .map_err(IntoResponse::into_response)?;
    let database = within("the database", async {
        sqlx::query("select 1")
            .execute(&state.db)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    });
    let store = within("the object store", async {
        state.storage.reachable().await.map_err(|e| e.to_string())
    });
    let (database, store) = tokio::join!(database, store);
    let failing: Vec<String> = [database, store].into_iter().flatten().collect();
    if failing.is_empty() {
        return Ok(axum::Json(Health { status: "ready" }));
    }
    tracing::warn!(failing = ?failing, "not ready");
    Err((
        StatusCode::SERVICE_UNAVAILABLE,
        axum::Json(ErrorBody {
            error: format!("not ready: {} did not answer", failing.join(", ")),
            code: "not_ready".to_string(),
            field: None,
            retryable: true,
        }),
    )
        .into_response())
}

/// `None` when `check` answers well within [`PATIENCE`]; else what did not, and why.
async fn within(what: &str, check: impl Future<Output = Result<(), String>>) -> Option<String> {
    match tokio::time::timeout(PATIENCE, check).await {
        Ok(Ok(())) => None,
        Ok(Err(cause)) => Some(format!("{what} ({cause})")),
        Err(_) => Some(format!("{what} (no answer in {} s)", PATIENCE.as_secs())),
    }
}
