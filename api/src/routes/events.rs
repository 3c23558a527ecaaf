//! The drive event feed: what happened in the caller's drive, oldest first, paged by an
//! opaque cursor that never skips or repeats an event (see `drive_core::db::events::page`).

use std::time::Duration;

use axum::extract::State;
use chrono::{DateTime, TimeDelta, Utc};
use drive_core::db::events::{self, Cursor, EventKind, Filter, Since};
use drive_core::folder::FolderPath;
use drive_core::id::{FileId, GenerationId, JobId, RequestId, ReviewId, UserId};
use drive_core::input::{Bounded, Line, List, UNLIMITED};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::follow::Woken;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(select_drive_events))
}

/// `since` in the document: a cursor as [`Cursor::decode`] reads it, or an RFC 3339 time.
fn since_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, OneOfBuilder, SchemaFormat, Type};
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(r"^c\+?[0-9]{1,19}\.[+-]?[0-9]{1,18}$")),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
        )
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .build()
        .into()
}

/// The request of `/select-drive-events`; every field is optional.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventsInput {
    /// A `nextCursor` from before, or an ISO 8601 time; default 24 hours ago.
    #[schema(schema_with = since_schema)]
    since: Option<Line>,
    /// Kinds to include (at least one); default the contract's six. The kinds a mirror
    /// follows (`trashed`, `restored`, `deleted`, `moved`, `renamed`, `access`) come only when
    /// named here.
    kinds: Option<List<EventKind, 1, { UNLIMITED }>>,
    /// This folder and folders inside it: events about files there.
    folder: Option<FolderPath>,
    /// Only drops to this request.
    request_id: Option<RequestId>,
    /// Only notes on this review.
    review_id: Option<ReviewId>,
    /// Only views of this file.
    file_id: Option<FileId>,
    /// Only this generation finishing.
    generation_id: Option<GenerationId>,
    /// Only this job ending.
    job_id: Option<JobId>,
    /// 1 to 100; default 50.
    limit: Option<Bounded<1, 100>>,
    /// Extension: seconds, 0 to 60 (default 0). When nothing newer than `since` matches, the
    /// call holds until something does (answered within a second of it) or the wait ends, and
    /// then answers as usual (an empty page at the end of the wait).
    wait: Option<Bounded<0, 60>>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventPage {
    /// Oldest first. Each has `kind`, `id`, `time` and its kind's fields.
    #[schema(value_type = Vec<Object>)]
    events: Vec<serde_json::Value>,
    /// Pass back as `since` for what follows.
    next_cursor: String,
    /// Whether another page follows this one now.
    more: bool,
}

/// What happened in the caller's drive, oldest first.
#[utoipa::path(post, path = "/select-drive-events", tag = "events", request_body = Option<EventsInput>,
    responses((status = 200, body = EventPage)))]
async fn select_drive_events(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<EventsInput>>,
) -> ApiResult<axum::Json<EventPage>> {
    let input = input.unwrap_or_default();
    let since = match input.since.as_deref() {
        None => Since::Time(Utc::now() - TimeDelta::hours(24)),
        Some(s) => Cursor::decode(s)
            .map(Since::Cursor)
            .or_else(|| {
                DateTime::parse_from_rfc3339(s)
                    .ok()
                    .map(|t| Since::Time(t.into()))
            })
            .ok_or_else(|| ApiError::invalid("since", "since must be a nextCursor or an ISO 8601 time"))?,
    };
    let limit = input.limit.map_or(50, Bounded::get);
    let subjects = [
        (EventKind::Drop, input.request_id.map(Uuid::from)),
        (EventKind::Note, input.review_id.map(Uuid::from)),
        (EventKind::View, input.file_id.map(Uuid::from)),
        (EventKind::Generation, input.generation_id.map(Uuid::from)),
        (EventKind::Job, input.job_id.map(Uuid::from)),
    ]
    .into_iter()
    .filter_map(|(kind, id)| id.map(|id| (kind, id)))
    .collect();
    let filter = Filter {
        kinds: Some(input.kinds.map_or_else(EventKind::contract, Vec::from)),
        subjects,
        // The top holds everything: no filter.
        folder: input.folder.filter(|f| !f.is_top()).map(|f| f.stored()),
    };
    let wait = Duration::from_secs(input.wait.map_or(0, Bounded::get) as u64);
    let page = follow(&state, caller.user_id, since, &filter, limit, wait).await?;
    let events = page.events.into_iter().map(events::EventRow::into_json).collect();
    Ok(axum::Json(EventPage {
        events,
        next_cursor: page.next.encode(),
        more: page.more,
    }))
}

/// A page of the caller's events; when it is empty and `wait` is given, asked again each time
/// the caller may have a new event, until one comes or `wait` ends. A wake whose event is not
/// yet visible (an older transaction, of anyone's, still running holds the feed back) is looked
/// at again every 100 ms for two seconds.
async fn follow(
    state: &AppState,
    user: UserId,
    since: Since,
    filter: &Filter,
    limit: i64,
    wait: Duration,
) -> ApiResult<events::Page> {
    let deadline = tokio::time::Instant::now() + wait;
    // Taken before the first look, so an event written between a look and the wait still wakes.
    let mut waiter = (!wait.is_zero()).then(|| state.follow.subscribe());
    let mut recheck_until: Option<tokio::time::Instant> = None;
    loop {
        let page = events::page(&state.db, user, since, filter, limit).await?;
        let now = tokio::time::Instant::now();
        let Some(waiter) = waiter
            .as_mut()
            .filter(|_| page.events.is_empty() && now < deadline)
        else {
            return Ok(page);
        };
        let until = match recheck_until {
            Some(until) if until > now => deadline.min(now + RECHECK),
            _ => deadline,
        };
        if waiter.wait(Woken::Events(user), until).await {
            recheck_until = Some(tokio::time::Instant::now() + RECHECK_FOR);
        }
    }
}

const RECHECK: Duration = Duration::from_millis(100);
const RECHECK_FOR: Duration = Duration::from_secs(2);
