//! `/search-files`: by metadata, every filter given narrowing the result; with `query`, inside
//! the files the owner has had read (readForSearch jobs), by words and by meaning, the other
//! filters narrowing which files it looks in.

use axum::extract::State;
use chrono::{DateTime, Utc};
use std::collections::HashMap;

use drive_core::db::files;
use drive_core::db::search::{self, After, BoundingBox, Filters, Hit, Sort, Start, Whose};
use drive_core::file::{FileKind, FileName, is_own_thumbnail};
use drive_core::folder::{self, FolderPath};
use drive_core::id::{FileId, FolderId, UserId};
use drive_core::input::{Bounded, Line, List, MAX_OFFSET};
use drive_core::metadata::{Location, MetadataState, MusicalKey};
use drive_core::storage::Bucket;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::routes::download::DOWNLOAD_LINK_LIFETIME;
use crate::state::AppState;

mod inside;
use inside::{MomentHit, inside};

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

/// Degrees; `south` at most `north`. `west` may be east of `east`: the box crosses the
/// antimeridian.
#[derive(Debug, Deserialize, ToSchema)]
pub struct Within {
    #[schema(minimum = -90, maximum = 90)]
    south: f64,
    #[schema(minimum = -180, maximum = 180)]
    west: f64,
    #[schema(minimum = -90, maximum = 90)]
    north: f64,
    #[schema(minimum = -180, maximum = 180)]
    east: f64,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchInput {
    /// What is said, seen or written inside files (at most 500 characters), matched by words
    /// and by meaning within the files the owner has had read (`readForSearch` jobs).
    query: Option<Line<1, 500>>,
    /// Words that must all appear in a file's name, description, tags, title, artists, album or
    /// genre; also finds folders by name.
    text: Option<Line<0, 500>>,
    types: Option<Vec<FileKind>>,
    /// Only these files (1 to 200): a file's whole record, as the app's preview shows it.
    file_ids: Option<List<FileId, 1, 200>>,
    /// Only files of exactly this name (case counts). With `minSize` and `maxSize`, how a
    /// client finds a file it stored already without listing the library.
    file_name: Option<FileName>,
    /// Tag names (case-insensitive); files must carry every one.
    tags: Option<Vec<Line>>,
    /// A folder path; includes folders inside it.
    folder: Option<FolderPath>,
    /// False: only the files directly in `folder` (at the top when `folder` is left out or
    /// `/`), not in the folders inside it, as a folder's view lists them. Default true.
    subfolders: Option<bool>,
    is_public: Option<bool>,
    uploaded_after: Option<DateTime<Utc>>,
    uploaded_before: Option<DateTime<Utc>>,
    taken_after: Option<DateTime<Utc>>,
    taken_before: Option<DateTime<Utc>>,
    #[schema(minimum = 0)]
    min_duration: Option<f64>,
    #[schema(minimum = 0)]
    max_duration: Option<f64>,
    min_size: Option<Bounded<0, { i64::MAX }>>,
    max_size: Option<Bounded<0, { i64::MAX }>>,
    #[schema(minimum = 0)]
    min_tempo: Option<f64>,
    #[schema(minimum = 0)]
    max_tempo: Option<f64>,
    /// A musical key: a note letter, optional sharp or flat, optional mode.
    #[schema(schema_with = key_schema)]
    key: Option<Line>,
    /// Where a photo was taken.
    within: Option<Within>,
    /// Files others share with the caller: `include` them beside the caller's own, or look at
    /// `only` them. Left out, only the caller's own. `tags` are the caller's own tags, which
    /// shared files do not carry; `folder` is a path in the owner's drive.
    shared: Option<SearchShared>,
    #[serde(default)]
    sort: SortBy,
    /// 1 to 200; default 50.
    limit: Option<Bounded<1, 200>>,
    /// Default 0. Not with `cursor`.
    offset: Option<Bounded<0, { MAX_OFFSET }>>,
    /// A `nextCursor` of the same search (its filters and `sort`; not with `offset`): the page
    /// right after it, read straight off the index however deep it is, where a deep `offset`
    /// counts every file before it. Not used with `query`.
    cursor: Option<Line<1, 400>>,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchShared {
    Include,
    Only,
}

fn key_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .pattern(Some(MusicalKey::PATTERN))
        .build()
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
    /// Where it sits (`/` for the top), with a trailing slash; for a file shared with the
    /// caller, in its owner's drive.
    folder: String,
    /// The caller's folder it sits in; null at the top and for a file shared with the caller.
    folder_id: Option<FolderId>,
    /// The handle of the account that shared it with the caller; absent for the caller's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
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
    /// The picture chosen for it (`/set-cover`, `/set-video-thumbnail`), else a video's poster
    /// or a track's cover art or a picture's thumbnail extracted as a file of its own (reached
    /// with `/generate-download-url`, never listed).
    artwork_id: Option<FileId>,
    /// A 6-hour link to `artworkId`'s bytes, to show it (a grid of files) without asking for
    /// each.
    artwork_url: Option<String>,
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
    /// Pass back as `offset` for the next page; null on the last, and on a page asked for by
    /// `cursor` (whose offset is not counted).
    next_offset: Option<i64>,
    /// Pass back as `cursor` (with the same filters and sort) for the next page; null on the
    /// last. Without `query` only.
    next_cursor: Option<String>,
    /// With `text`, on the first page, when nothing else narrows files by what they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    folders: Option<Vec<FolderHit>>,
    /// With `query`: the moments found, best first, at most three a file and at most 50 (or
    /// `limit`); `files` are the files they are in.
    #[serde(skip_serializing_if = "Option::is_none")]
    moments: Option<Vec<MomentHit>>,
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
    let text = input.text.as_deref().unwrap_or_default();
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
        whose: match input.shared {
            None => Whose::Own,
            Some(SearchShared::Include) => Whose::OwnAndShared,
            Some(SearchShared::Only) => Whose::Shared,
        },
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
        folder_only: input.subfolders == Some(false),
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
        ids: input.file_ids.as_ref().map(|ids| ids.to_vec()),
        file_name: input.file_name.as_ref().map(|name| name.as_str().to_string()),
    })
}

/// Where the page starts: after `cursor`, which must be of the same sort and not beside an
/// `offset`, else after `offset` files. A search with `query` answers one page, so neither
/// applies to it, as `sort` does not.
fn start(input: &SearchInput, sort: Sort) -> ApiResult<Start> {
    let cursor = input.cursor.as_deref().filter(|_| input.query.is_none());
    let Some(cursor) = cursor else {
        return Ok(Start::Offset(input.offset.map_or(0, Bounded::get)));
    };
    if input.offset.is_some() {
        return Err(ApiError::invalid("cursor", "give cursor or offset, not both"));
    }
    let after = After::decode(cursor).ok_or_else(|| ApiError::invalid("cursor", "is not a nextCursor"))?;
    if after.sort != sort {
        return Err(ApiError::invalid("cursor", "is a nextCursor of another sort"));
    }
    Ok(Start::After(after))
}

/// The words of `text`, split at spaces and slashes, lower case.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == '/')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The answers for `hits`, each with a link to its artwork (a small picture is its own): the
/// artworks' rows are read in one query and their links signed here (no call to the store), so
/// a page of a grid costs one call.
async fn results(hits: Vec<Hit>, state: &AppState, caller: UserId) -> ApiResult<Vec<SearchResult>> {
    let link = |bucket, key: &str, name: &str| {
        let (key, name) = (key.to_string(), name.to_string());
        async move {
            state
                .storage
                .presign_get(bucket, &key, &name, DOWNLOAD_LINK_LIFETIME)
                .await
        }
    };
    let artwork: Vec<FileId> = hits.iter().filter_map(|h| h.artwork_id).collect();
    let mut links = HashMap::new();
    for row in files::rows(&state.db, &artwork).await? {
        links.insert(row.id, link(row.bucket, &row.object_key, &row.file_name).await?);
    }
    let mut answers = Vec::with_capacity(hits.len());
    for hit in hits {
        let own = hit.kind == FileKind::Image && is_own_thumbnail(&hit.mime_type, hit.file_size);
        let artwork_url = match hit.artwork_id {
            Some(id) => links.get(&id).cloned(),
            None if own => Some(link(hit.bucket, &hit.object_key, &hit.file_name).await?),
            None => None,
        };
        answers.push(SearchResult {
            artwork_url,
            ..result(hit, state, caller)
        });
    }
    Ok(answers)
}

fn result(hit: Hit, state: &AppState, caller: UserId) -> SearchResult {
    let is_public = hit.bucket == Bucket::Public;
    let own = hit.owner_id == caller;
    SearchResult {
        owner: (!own).then_some(hit.owner_handle),
        folder_id: hit.folder_id.filter(|_| own),
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
        artwork_url: None,
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
    let sort = match input.sort {
        SortBy::Newest => Sort::Newest,
        SortBy::Oldest => Sort::Oldest,
        SortBy::Largest => Sort::Largest,
        SortBy::Smallest => Sort::Smallest,
        SortBy::Name => Sort::Name,
    };
    let start = start(&input, sort)?;
    if let Some(query) = input.query.as_deref() {
        return Ok(axum::Json(
            inside(&state, caller.user_id, query, &filters, limit).await?,
        ));
    }
    let mut hits = search::files(&state.db, caller.user_id, &filters, sort, limit, &start).await?;
    let more = hits.len() as i64 > limit;
    hits.truncate(limit as usize);
    let next_cursor = hits
        .last()
        .filter(|_| more)
        .map(|last| After::hit(last, sort).encode());

    let first_page = start == Start::Offset(0);
    let folders = if !filters.words.is_empty() && first_page && !filters.narrows_by_content() {
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
        files: results(hits, &state, caller.user_id).await?,
        next_offset: match start {
            Start::Offset(offset) => more.then_some(offset + limit),
            Start::After(_) => None,
        },
        next_cursor,
        folders,
        moments: None,
    }))
}
