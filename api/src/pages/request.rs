//! `{site}/requests/{id}`: what the request asks, and, while it is open, a form to send files
//! to it (`pages/request.js` does the sending through the sender routes).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use drive_core::db::requests::{self, RequestRow, Shut};
use drive_core::id::RequestId;

use super::{counted, escape, html, not_found};
use crate::client::ClientAddress;
use crate::state::AppState;

pub async fn page(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Path(id): Path<String>,
) -> Response {
    if let Err(e) = counted(&state, client).await {
        return e.into_response();
    }
    let Ok(id) = id.parse::<RequestId>() else {
        return not_found(&state, "There is no file request at this link.");
    };
    match requests::find(&state.db, id).await {
        Ok(Some(request)) => render(&state, &request),
        Ok(None) => not_found(&state, "There is no file request at this link."),
        Err(e) => crate::error::ApiError::from(e).into_response(),
    }
}

fn render(state: &AppState, request: &RequestRow) -> Response {
    let title = escape(&request.title);
    let message = request
        .message
        .as_deref()
        .map(|m| format!(r#"<p class="message">{}</p>"#, escape(m)))
        .unwrap_or_default();
    let now = Utc::now();
    let form = if let Some(shut) = request.shut(now) {
        let why = match shut {
            Shut::Expired(_) => "This request stopped taking files.",
            Shut::Closed => "This request is closed and takes no files.",
        };
        format!(r#"<p class="closed" id="closed" role="alert">{why}</p>"#)
    } else {
        let accept = request.accept_types.as_deref().unwrap_or_default();
        let accept_note = if accept.is_empty() {
            String::new()
        } else {
            format!(r#"<p class="accept">Takes {}.</p>"#, escape(&accept.join(", ")))
        };
        let accept_attribute = accept
            .iter()
            .map(|a| match a.as_str() {
                "Video" => "video/*",
                "Audio" => "audio/*",
                "Image" => "image/*",
                "Pdf" => ".pdf",
                "Text" => "text/*",
                "Archive" => ".zip",
                extension => extension,
            })
            .collect::<Vec<_>>()
            .join(",");
        let limits = [
            request.max_files_per_sender.map(|n| format!("at most {n} files")),
            request
                .expires_at
                .map(|t| format!("until {}", t.format("%Y-%m-%d %H:%M UTC"))),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
        let limits = if limits.is_empty() {
            String::new()
        } else {
            format!(r#"<p class="accept">Open {}.</p>"#, escape(&limits.join(", ")))
        };
        format!(
            r#"<form id="send" novalidate>
<label for="senderName">Your name</label>
<input type="text" id="senderName" name="senderName" maxlength="100" autocomplete="name" required>
<label for="note">A note (optional)</label>
<textarea id="note" name="note" maxlength="2000"></textarea>
<div id="zone" class="zone">
<p>Drop files here, or</p>
<label class="pick">Choose files<input type="file" id="files" multiple accept="{accept}"></label>
{accept_note}{limits}
</div>
<ul id="list" class="files" aria-live="polite"></ul>
<button type="submit" id="sendButton">Send</button>
<p id="status" role="status"></p>
</form>"#,
            accept = escape(&accept_attribute),
        )
    };
    let body = format!(
        r#"<main class="page" id="request" data-request-id="{id}">
<h1>{title}</h1>
{message}
{form}
<footer>Files you send go to the person who shared this link. Drive asks for no account.</footer>
</main>"#,
        id = request.id,
    );
    html(
        state,
        StatusCode::OK,
        &title,
        &body,
        request.is_open(now).then_some("request.js"),
        "'none'",
    )
}
