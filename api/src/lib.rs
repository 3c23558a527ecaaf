//! Drive's HTTP API: a thin layer that validates, authorizes, writes a row, signs a URL or
//! enqueues work. It never touches file bytes.

pub mod agent;
pub mod app;
pub mod auth;
pub mod client;
pub mod document;
pub mod error;
pub mod extract;
pub mod follow;
pub mod limits;
pub mod metrics;
pub mod moment_index;
pub mod oauth;
pub mod pages;
pub mod reader;
pub mod records;
pub mod request_id;
pub mod routes;
pub mod state;

use std::any::Any;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::error::ApiError;
use crate::state::AppState;

/// The interface version the spec names.
pub const API_VERSION: &str = "2026.09.28";

#[derive(OpenApi)]
#[openapi(info(
    title = "Drive",
    version = "2026.09.28",
    description = "File storage and sharing: direct-to-storage uploads, library, trash."
))]
struct ApiDoc;

/// The whole API: every route, and the OpenAPI document generated from those same routes.
pub fn app(state: AppState) -> Router {
    let (router, doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(routes::auth::router())
        .merge(routes::people::router())
        .merge(routes::upload::router())
        .merge(routes::multipart::router())
        .merge(routes::download::router())
        .merge(routes::read::router())
        .merge(routes::library::router())
        .merge(routes::trash::router())
        .merge(routes::events::router())
        .merge(routes::subscriptions::router())
        .merge(routes::connections::router())
        .merge(routes::agent_tasks::router())
        .merge(routes::organize::router())
        .merge(routes::files::router())
        .merge(routes::folders::router())
        .merge(routes::shares::router())
        .merge(routes::collections::router())
        .merge(routes::views::router())
        .merge(routes::search::router())
        .merge(routes::jobs::router())
        .merge(routes::templates::router())
        .merge(routes::rules::router())
        .merge(routes::imports::router())
        .merge(routes::generations::router())
        .merge(routes::artwork::router())
        .merge(routes::requests::router())
        .merge(routes::reviews::router())
        .merge(routes::version::router())
        .merge(routes::health::router())
        .split_for_parts();
    let doc = document::served(doc);
    let router = router
        .route("/openapi.json", get(move || async move { axum::Json(doc) }))
        .merge(pages::router())
        .merge(app::router())
        .merge(oauth::router())
        .merge(agent::router());
    with_error_bodies(router)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            metrics::count,
        ))
        .with_state(state)
}

/// `GET /metrics` alone, for a listener of its own (`DRIVE_METRICS_LISTEN`): the metrics name
/// every route and job type and ask the database, so they are for the operator's network only,
/// never on the public listener (which answers `/metrics` like any unknown route).
pub fn metrics_app(state: AppState) -> Router {
    with_error_bodies(Router::new().route("/metrics", get(metrics::scrape))).with_state(state)
}

/// Every answer that is not a success carries the error body, including those no handler
/// writes: a route that does not exist (404), a method a route does not take (405), a body
/// over the limit (413, answered by the extractor) and a panic (500, logged; without this the
/// connection would be dropped with no answer). Called once every route is in, as the 405
/// applies to the routes already there.
fn with_error_bodies<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    router
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(extract::BODY_LIMIT))
        .layer(CatchPanicLayer::custom(panicked))
        // Outermost: the id's span covers everything, a panic's log line included.
        .layer(axum::middleware::from_fn(request_id::tag))
}

async fn unknown_route(uri: Uri) -> ApiError {
    ApiError::not_found("unknown_route", format!("there is no route {}", uri.path()))
}

async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::MethodNotAllowed {
        message: format!("{} does not take {method}", uri.path()),
    }
}

fn panicked(panic: Box<dyn Any + Send + 'static>) -> Response {
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".to_string());
    ApiError::Panic(message).into_response()
}

#[cfg(test)]
mod tests {
    use axum::body::{Body, to_bytes};
    use axum::http::{Request, StatusCode};
    use axum::routing::post;
    use tower::ServiceExt;

    use super::*;

    #[tokio::test]
    async fn a_panic_answers_500_with_the_error_body() {
        async fn boom() -> &'static str {
            panic!("boom")
        }
        let router = with_error_bodies(Router::new().route("/boom", post(boom)));
        let request = Request::post("/boom").body(Body::empty()).unwrap();
        let response = router.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = to_bytes(response.into_body(), 10_000).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["code"], "internal", "{body}");
        assert_eq!(body["retryable"], true, "{body}");
        assert!(!body["error"].as_str().unwrap().contains("boom"), "{body}");
    }
}
