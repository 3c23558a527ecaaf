//! The web pages people without an account open: a file request's page and a review's (with
//! their scripts and style); the OAuth consent page (`crate::oauth`) is drawn the same way. Server-rendered HTML with a little JavaScript, no build step, nothing from another
//! site: the only other origin a page talks to is the object store its bytes go to.

mod request;
mod review;

use std::net::IpAddr;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_http::compression::CompressionLayer;

use crate::error::ApiResult;
use crate::limits::Limited;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/pages/pages.css",
            get(|| asset("text/css; charset=utf-8", include_str!("../../pages/pages.css"))),
        )
        .route(
            "/pages/call.js",
            get(|| script(include_str!("../../pages/call.js"))),
        )
        .route(
            "/pages/request.js",
            get(|| script(include_str!("../../pages/request.js"))),
        )
        .route(
            "/pages/review.js",
            get(|| script(include_str!("../../pages/review.js"))),
        )
        // Style and scripts go compressed to a browser that takes it; the pages themselves are
        // small, and hold what visitors wrote.
        .layer(CompressionLayer::new())
        .route("/requests/{id}", get(request::page))
        .route("/reviews/{id}", get(review::page))
}

pub(crate) async fn script(body: &'static str) -> Response {
    asset("text/javascript; charset=utf-8", body).await
}

pub(crate) async fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=300"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// Counts a page view against the per-address limit on anonymous calls.
async fn counted(state: &AppState, client: IpAddr) -> ApiResult<()> {
    state.limits.check(Limited::Anonymous, client).await
}

/// A whole page: `title` and `body` are HTML already escaped. Scripts and styles come from this
/// site only, the page may send bytes to the store's origin and nowhere else, and its forms may
/// go where `forms` says (a CSP source list; `'none'` for pages whose forms are scripts').
pub(crate) fn html(
    state: &AppState,
    status: StatusCode,
    title: &str,
    body: &str,
    script: Option<&str>,
    forms: &str,
) -> Response {
    let script = script
        .map(|s| format!(r#"<script type="module" src="/pages/{s}"></script>"#))
        .unwrap_or_default();
    let page = format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{title} · Drive</title>
<link rel="stylesheet" href="/pages/pages.css">
{script}
</head>
<body>
{body}
</body>
</html>
"#
    );
    let mut response = (status, page).into_response();
    secure_page(state, &mut response, forms);
    response
}

/// The headers every page of the drive's is served with (the app's too): HTML never cached nor
/// sniffed, no referrer, and a policy under which scripts and styles come from this site only,
/// bytes go to and come from the store's origins and nowhere else, forms go where `forms` says,
/// and no other site may frame it.
pub(crate) fn secure_page(state: &AppState, response: &mut Response, forms: &str) {
    let store = origin(state.storage.endpoint());
    let public = origin(state.storage.public_base_url());
    let policy = format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: {store} {public}; \
         media-src 'self' blob: {store} {public}; connect-src 'self' {store}; form-action {forms}; \
         frame-ancestors 'none'; base-uri 'none'"
    );
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
}

/// `scheme://host:port` of a URL (the whole of it when it has no path).
fn origin(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => &url[..after_scheme + i],
        None => url,
    }
}

/// Text made safe inside HTML, in an element or a quoted attribute.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page for a link that leads nowhere.
fn not_found(state: &AppState, what: &str) -> Response {
    let body = format!(
        r#"<main class="page"><h1>Nothing here</h1><p class="message">{}</p></main>"#,
        escape(what)
    );
    html(
        state,
        StatusCode::NOT_FOUND,
        "Nothing here",
        &body,
        None,
        "'none'",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_open_a_tag_or_leave_an_attribute() {
        assert_eq!(
            escape(r#"<script>"a" & 'b'</script>"#),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn the_store_origin_is_scheme_host_and_port() {
        assert_eq!(origin("http://127.0.0.1:8333"), "http://127.0.0.1:8333");
        assert_eq!(origin("https://s3.example.com/bucket"), "https://s3.example.com");
    }
}
