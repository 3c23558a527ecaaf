//! `{site}/reviews/{id}`: the video or track, played from a presigned link, with the notes left
//! at its moments. `pages/review.js` lists the notes, renews the link before it lapses, and
//! leaves notes and replies through the reviewer routes.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use drive_core::file::FileKind;
use drive_core::id::ReviewId;

use super::{counted, escape, html, not_found};
use crate::client::ClientAddress;
use crate::routes::reviews;
use crate::state::AppState;

const GONE: &str = "There is no review at this link, or its file is no longer there.";

/// A closed review's page: 403, saying so (its notes stay with its owner).
fn closed(state: &AppState) -> Response {
    let body = r#"<main class="page"><h1>This review is closed</h1><p class="message">The person who shared this link has closed it: it takes no more notes.</p></main>"#;
    html(
        state,
        StatusCode::FORBIDDEN,
        "Review closed",
        body,
        None,
        "'none'",
    )
}

pub async fn page(
    State(state): State<AppState>,
    ClientAddress(client): ClientAddress,
    Path(id): Path<String>,
) -> Response {
    if let Err(e) = counted(&state, client).await {
        return e.into_response();
    }
    let Ok(id) = id.parse::<ReviewId>() else {
        return not_found(&state, GONE);
    };
    let review = match reviews::available(&state, id).await {
        Ok(review) => review,
        Err(crate::error::ApiError::NotFound { .. }) => return not_found(&state, GONE),
        Err(crate::error::ApiError::Forbidden { .. }) => return closed(&state),
        Err(e) => return e.into_response(),
    };
    let title = escape(&review.title);
    let player = match review.kind {
        FileKind::Audio => r#"<audio id="player" controls preload="metadata"></audio>"#,
        _ => r#"<video id="player" controls playsinline preload="metadata"></video>"#,
    };
    let body = format!(
        r#"<main class="page review" id="review" data-review-id="{id}">
<h1>{title}</h1>
<p class="message">{file}</p>
<div class="player">{player}</div>
<form id="noteForm" novalidate>
<label for="reviewerName">Your name</label>
<input type="text" id="reviewerName" name="reviewerName" maxlength="100" autocomplete="name" required>
<label for="noteText">Note</label>
<textarea id="noteText" name="noteText" maxlength="2000" required></textarea>
<button type="submit" id="noteButton">Add note at <span id="noteAt">0:00</span></button>
<p id="status" role="status"></p>
</form>
<h2>Notes</h2>
<ol id="notes" class="notes" aria-live="polite"></ol>
<footer>Notes you leave go to the person who shared this link. Drive asks for no account.</footer>
</main>"#,
        id = review.id,
        file = escape(&review.file_name),
    );
    html(&state, StatusCode::OK, &title, &body, Some("review.js"), "'none'")
}
