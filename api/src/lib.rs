//! Drive's HTTP API: a thin layer that validates, authorizes, writes a row, signs a URL or
//! enqueues work. It never touches file bytes.

pub mod auth;
pub mod error;
pub mod extract;
pub mod limits;
pub mod records;
pub mod routes;
pub mod state;

use axum::Router;
use axum::routing::get;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Content, OpenApi as OpenApiDoc, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;

use crate::error::ErrorBody;
use crate::state::AppState;

/// The interface version the spec names.
pub const API_VERSION: &str = "2026.09.28";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Drive",
        version = "2026.09.28",
        description = "File storage and sharing: direct-to-storage uploads, library, trash."
    ),
    components(schemas(ErrorBody))
)]
struct ApiDoc;

/// What every operation shares: the error body as the default response and the two
/// credentials (session bearer token and application header).
struct CommonParts;

impl Modify for CommonParts {
    fn modify(&self, doc: &mut OpenApiDoc) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "session",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "app",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new(auth::APP_HEADER))),
        );
        let error = ResponseBuilder::new()
            .description("An error: `{ error, code, field?, retryable }`.")
            .content(
                "application/json",
                Content::new(Some(RefOr::Ref(Ref::from_schema_name("ErrorBody")))),
            )
            .build();
        for item in doc.paths.paths.values_mut() {
            if let Some(op) = item.post.as_mut() {
                op.responses
                    .responses
                    .insert("default".into(), RefOr::T(error.clone()));
            }
        }
    }
}

/// The whole API: every route, and the OpenAPI document generated from those same routes.
pub fn app(state: AppState) -> Router {
    let (router, mut doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(routes::auth::router())
        .merge(routes::upload::router())
        .merge(routes::download::router())
        .merge(routes::library::router())
        .merge(routes::trash::router())
        .merge(routes::events::router())
        .merge(routes::organize::router())
        .merge(routes::collections::router())
        .merge(routes::views::router())
        .merge(routes::search::router())
        .merge(routes::jobs::router())
        .split_for_parts();
    CommonParts.modify(&mut doc);
    router
        .route("/openapi.json", get(move || async move { axum::Json(doc) }))
        .with_state(state)
}
