//! `/search-files` by metadata: every filter given narrows the result. (`query`, search by
//! what is inside files, arrives with content reading.)

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::search::{self, BoundingBox, Filters, Hit, Sort};
use drive_core::file::FileKind;
use drive_core::folder::{self, FolderPath};
use drive_core::id::{FileId, FolderId};
use drive_core::input::{Bounded, Line, MAX_OFFSET};
use drive_core::metadata::{Location, MetadataState, MusicalKey};
use drive_core::storage::Bucket;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(search_files))
}

#[derive(Debug, Clone, Copy, Default, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortBy {
    #[default]
    Newest,
    Oldest,
    Largest,
    Smallest,
    Name,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Within {
    south: f64,
    west: f64,
    north: f64,
    east: f64,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchInput {
    /// Search inside files: not available yet.
    query: Option<Line>,
    /// Words that must all appear in a file's name, description, tags, title, artists, album or
    /// genre; also finds folders by name.
    text: Option<Line>,
    types: Option<Vec<FileKind>>,
    /// Tag names (case-insensitive); files must carry every one.
    tags: Option<Vec<Line>>,
    /// A folder path; includes folders inside it.
    folder: Option<FolderPath>,
    is_public: Option<bool>,
    uploaded_after: Option<DateTime<Utc>>,
    uploaded_before: Option<DateTime<Utc>>,
    taken_after: Option<DateTime<Utc>>,
    taken_before: Option<DateTime<Utc>>,
    min_duration: Option<f64>,
    max_duration: Option<f64>,
    min_size: Option<Bounded<0, { i64::MAX }>>,
    max_size: Option<Bounded<0, { i64::MAX }>>,
    min_tempo: Option<f64>,
    max_tempo: Option<f64>,
    /// A musical key: a note letter, optional sharp or flat, optional mode.
    key: Option<Line>,
    /// Where a photo was taken.
    within: Option<Within>,
    #[serde(default)]
    sort: SortBy,
    /// 1 to 200; default 50.
    limit: Option<Bounded<1, 200>>,
    /// Default 0.
    offset: Option<Bounded<0, { MAX_OFFSET }>>,
}

/// A file found.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    id: FileId,
    file_name: String,
    file_size: i64,
    mime_type: String,
    #[serde(rename = "type")]
    kind: FileKind,
    is_public: bool,
    /// The permanent link of a public file; null for a private one.
    download_url: Option<String>,
    insert_time: DateTime<Utc>,
    modified_time: Option<DateTime<Utc>>,
    description: Option<String>,
    /// Where it sits (`/` for the top), with a trailing slash.
    folder: String,
    tags: Vec<String>,
    title: Option<String>,
    artists: Vec<String>,
    album: Option<String>,
    genre: Option<String>,
    taken_time: Option<DateTime<Utc>>,
    duration: Option<f64>,
    tempo: Option<f64>,
    key: Option<String>,
    location: Option<Location>,
    /// Pictures and videos: pixels across and down.
    width: Option<i32>,
    height: Option<i32>,
    video_codec: Option<String>,
    audio_codec: Option<String>,
    /// Audio, video and pictures: `pending` until the drive has read the file, then `read`,
    /// or `failed` with `metadataError`; null for other files.
    metadata_state: Option<MetadataState>,
    metadata_error: Option<String>,
    /// A video's poster or a track's cover art, extracted as a file of its own (reached with
    /// `/generate-download-url`, never listed).
    artwork_id: Option<FileId>,
}

/// A folder found by name.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderHit {
    id: FolderId,
    name: String,
    /// With a trailing slash; pass it back as `folder`.
    path: String,
    /// Files directly in it.
    file_count: i64,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchAnswer {
    files: Vec<SearchResult>,
    /// Pass back as `offset` for the next page; null on the last.
    next_offset: Option<i64>,
    /// With `text`, on the first page, when nothing else narrows files by what they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    folders: Option<Vec<FolderHit>>,
}

fn non_negative<T: PartialOrd + Default + Copy>(field: &str, value: Option<T>) -> ApiResult<Option<T>> {
    match value {
        Some(v) if v < T::default() => Err(ApiError::invalid(field, format!("{field} must be at least 0"))),
        other => Ok(other),
    }
}

fn bounding_box(within: &Within) -> ApiResult<BoundingBox> {
    for (field, value, limit) in [
        ("within.south", within.south, 90.0),
        ("within.north", within.north, 90.0),
        ("within.west", within.west, 180.0),
        ("within.east", within.east, 180.0),
    ] {
        if !(-limit..=limit).contains(&value) {
            return Err(ApiError::invalid(
                field,
                format!("{field} must be in -{limit}..{limit}"),
            ));
        }
    }
    if within.south > within.north {
        return Err(ApiError::invalid(
            "within.south",
            "south must not be north of north",
        ));
    }
    Ok(BoundingBox {
        south: within.south,
        west: within.west,
        north: within.north,
        east: within.east,
    })
}

/// Parses the request into search filters, refusing any field it cannot take.
fn filters(input: &SearchInput) -> ApiResult<Filters> {
    if input.query.is_some() {
        return Err(ApiError::invalid(
            "query",
            "searching inside files is not available yet; use text and the other filters",
        ));
    }
    let text = input.text.as_deref().unwrap_or_default();
    if text.chars().count() > 500 {
        return Err(ApiError::invalid("text", "text is at most 500 characters"));
    }
    let key = match input.key.as_deref() {
        Some(k) => Some(MusicalKey::parse(k).ok_or_else(|| {
            ApiError::invalid(
                "key",
                "a key is a note letter, optional # or b, optional major or minor",
            )
        })?),
        None => None,
    };
    Ok(Filters {
        words: words(text),
        kinds: input
            .types
            .as_ref()
            .map(|ts| ts.iter().map(|t| t.as_str().to_string()).collect()),
        tags: input.tags.iter().flatten().map(|t| t.to_string()).collect(),
        folder: input
            .folder
            .as_ref()
            .filter(|f| !f.is_top())
            .map(FolderPath::stored),
        is_public: input.is_public,
        uploaded_after: input.uploaded_after,
        uploaded_before: input.uploaded_before,
        taken_after: input.taken_after,
        taken_before: input.taken_before,
        min_duration: non_negative("minDuration", input.min_duration)?,
        max_duration: non_negative("maxDuration", input.max_duration)?,
        min_size: input.min_size.map(Bounded::get),
        max_size: input.max_size.map(Bounded::get),
        min_tempo: non_negative("minTempo", input.min_tempo)?,
        max_tempo: non_negative("maxTempo", input.max_tempo)?,
        key,
        within: input.within.as_ref().map(bounding_box).transpose()?,
    })
}

/// The words of `text`, split at spaces and slashes, lower case.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == '/')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn result(hit: Hit, state: &AppState) -> SearchResult {
    let is_public = hit.bucket == Bucket::Public;
    SearchResult {
        id: hit.id,
        download_url: is_public.then(|| state.storage.public_link(hit.id)),
        file_name: hit.file_name,
        file_size: hit.file_size,
        mime_type: hit.mime_type,
        kind: hit.kind,
        is_public,
        insert_time: hit.created_at,
        modified_time: hit.modified_time,
        description: hit.description,
        folder: hit
            .folder_path
            .map_or_else(|| "/".to_string(), |p| folder::listed(&p)),
        tags: hit.tags,
        title: hit.title,
        artists: hit.artists.unwrap_or_default(),
        album: hit.album,
        genre: hit.genre,
        taken_time: hit.taken_time,
        duration: hit.duration_seconds,
        tempo: hit.tempo_bpm,
        key: hit.key_pitch.map(|pitch| {
            MusicalKey {
                pitch: pitch as u8,
                mode: hit.key_mode,
            }
            .name()
        }),
        location: hit
            .latitude
            .zip(hit.longitude)
            .map(|(latitude, longitude)| Location { latitude, longitude }),
        width: hit.width,
        height: hit.height,
        video_codec: hit.video_codec,
        audio_codec: hit.audio_codec,
        metadata_state: hit.metadata_state,
        metadata_error: hit.metadata_error,
        artwork_id: hit.artwork_id,
    }
}

/// Search the caller's library by metadata.
#[utoipa::path(post, path = "/search-files", tag = "library", request_body = Option<SearchInput>,
    responses((status = 200, body = SearchAnswer)))]
async fn search_files(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<SearchInput>>,
) -> ApiResult<axum::Json<SearchAnswer>> {
    let input = input.unwrap_or_default();
    let filters = filters(&input)?;
    let limit = input.limit.map_or(50, Bounded::get);
    let offset = input.offset.map_or(0, Bounded::get);
    let sort = match input.sort {
        SortBy::Newest => Sort::Newest,
        SortBy::Oldest => Sort::Oldest,
        SortBy::Largest => Sort::Largest,
        SortBy::Smallest => Sort::Smallest,
        SortBy::Name => Sort::Name,
    };
    let mut hits = search::files(&state.db, caller.user_id, &filters, sort, limit, offset).await?;
    let more = hits.len() as i64 > limit;
    hits.truncate(limit as usize);

    let folders = if !filters.words.is_empty() && offset == 0 && !filters.narrows_by_content() {
        let exact = input.text.as_deref().unwrap_or_default().trim().trim_matches('/');
        let found = search::folders(
            &state.db,
            caller.user_id,
            &filters.words,
            exact,
            filters.folder.as_deref(),
        )
        .await?;
        Some(
            found
                .into_iter()
                .map(|f| FolderHit {
                    id: f.id,
                    name: f.path.rsplit('/').next().unwrap_or_default().to_string(),
                    path: folder::listed(&f.path),
                    file_count: f.file_count,
                })
                .collect(),
        )
    } else {
        None
    };
    Ok(axum::Json(SearchAnswer {
        files: hits.into_iter().map(|h| result(h, &state)).collect(),
        next_offset: more.then_some(offset + limit),
        folders,
    }))
}
