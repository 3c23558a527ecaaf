//! The app: the web app people use their drive from, under `/app`. A page of HTML whose
//! JavaScript modules (in `api/app/`, compiled in) call the public API like any client, with
//! the short session `/sign-in` and `/renew-session` answer held in memory; no build step, no
//! code from another site, and the pages' strict policy (`pages::secure_page`).

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_http::compression::CompressionLayer;

use crate::pages::{asset, escape, secure_page};
use crate::state::AppState;

/// The app's files: name, content type, text.
const ASSETS: &[(&str, &str, &str)] = &[
    ("app.css", CSS, include_str!("../app/app.css")),
    ("main.js", JS, include_str!("../app/main.js")),
    ("api.js", JS, include_str!("../app/api.js")),
    ("dom.js", JS, include_str!("../app/dom.js")),
    ("signin.js", JS, include_str!("../app/signin.js")),
    ("files.js", JS, include_str!("../app/files.js")),
    ("tree.js", JS, include_str!("../app/tree.js")),
    ("upload.js", JS, include_str!("../app/upload.js")),
    ("store.js", JS, include_str!("../app/store.js")),
    ("account.js", JS, include_str!("../app/account.js")),
    ("shared.js", JS, include_str!("../app/shared.js")),
    ("preview.js", JS, include_str!("../app/preview.js")),
    ("search.js", JS, include_str!("../app/search.js")),
    ("jobs.js", JS, include_str!("../app/jobs.js")),
    ("agents.js", JS, include_str!("../app/agents.js")),
    ("schema.js", JS, include_str!("../app/schema.js")),
    ("generate.js", JS, include_str!("../app/generate.js")),
    ("connections.js", JS, include_str!("../app/connections.js")),
    ("activity.js", JS, include_str!("../app/activity.js")),
    ("requests.js", JS, include_str!("../app/requests.js")),
    ("reviews.js", JS, include_str!("../app/reviews.js")),
    ("collections.js", JS, include_str!("../app/collections.js")),
    ("trash.js", JS, include_str!("../app/trash.js")),
];
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/app/kinds.js", get(kinds))
        .route("/app/{name}", get(file))
        // The style and modules go compressed to a browser that takes it (the first view is
        // mostly them); the page is not, being small.
        .layer(CompressionLayer::new())
        .route("/app", get(page))
        .route("/app/", get(page))
}

/// The drive's table of extensions as a module, so an upload from the app names its kind and
/// media type exactly as one from the CLI (`drive_kinds::for_name`).
async fn kinds() -> Response {
    let table: serde_json::Map<String, serde_json::Value> = drive_kinds::by_extension()
        .map(|(extension, kind, mime)| (extension.to_string(), serde_json::json!([kind.as_str(), mime])))
        .collect();
    let module = format!(
        "// Made by the drive from its table of extensions (drive_kinds).\nexport const byExtension = {};\nexport const other = ['Other', '{}'];\n",
        serde_json::Value::Object(table),
        drive_kinds::OCTET_STREAM
    );
    let mut response = (StatusCode::OK, module).into_response();
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static(JS),
    );
    headers.insert(
        axum::http::header::X_CONTENT_TYPE_OPTIONS,
        axum::http::HeaderValue::from_static("nosniff"),
    );
    response
}

/// The one page: everything else is drawn by `main.js`. The application header's value rides in
/// a meta tag, so one build serves any `DRIVE_APP_ID`.
async fn page(State(state): State<AppState>) -> Response {
    let body = format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<meta name="drive-app" content="{app}">
<title>Drive</title>
<link rel="stylesheet" href="/app/app.css">
{preloads}<script type="module" src="/app/main.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<div id="app" aria-live="polite"><main id="main" class="center"><p>Opening your drive…</p></main></div>
</body>
</html>
"##,
        app = escape(&state.settings.app_id),
        preloads = preloads(),
    );
    let mut response = (StatusCode::OK, body).into_response();
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure_page(&state, &mut response, "'none'");
    response
}

/// Every module named up front, so the browser asks for them all at once rather than a level
/// of imports at a time as it reads each one.
fn preloads() -> String {
    ASSETS
        .iter()
        .filter(|(_, content_type, _)| *content_type == JS)
        .map(|(name, _, _)| format!("<link rel=\"modulepreload\" href=\"/app/{name}\">\n"))
        .chain(std::iter::once(
            "<link rel=\"modulepreload\" href=\"/app/kinds.js\">\n".to_string(),
        ))
        .collect()
}

async fn file(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, content_type, body)) => asset(content_type, body).await,
        None => crate::error::ApiError::not_found("unknown_route", format!("there is no route /app/{name}"))
            .into_response(),
    }
}
