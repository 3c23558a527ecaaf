//! Request ids: every request gets one — the caller's `X-Request-Id` when it is a sane token (1
//! to 128 letters, digits, `-`, `_`, `.`), else a new uuid — handled inside a `request` span
//! carrying it, so every log line a request causes (its error's cause included) names it; the
//! answer carries it back in `X-Request-Id`, for a caller reporting a problem to quote.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");

pub async fn tag(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(&HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| sane(v))
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let value = HeaderValue::from_str(&id).expect("a sane id is a header value");
    request.headers_mut().insert(HEADER, value.clone());
    let span =
        tracing::info_span!("request", id = %id, method = %request.method(), path = %request.uri().path());
    let mut response = next.run(request).instrument(span).await;
    response.headers_mut().insert(HEADER, value);
    response
}

fn sane(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::sane;

    #[test]
    fn only_plain_tokens_are_kept() {
        assert!(sane("3f1c9a2e-req.7_b"));
        assert!(!sane(""));
        assert!(!sane("a b"));
        assert!(!sane("x\"=y"));
        assert!(!sane(&"a".repeat(129)));
    }
}
