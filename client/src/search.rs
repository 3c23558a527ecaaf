//! Searching the library, typed: `/search-files` finds files by their names, tags, folders and
//! what is known of them, or with `query` the moments inside files that were read.

use anyhow::Result;
use chrono::{DateTime, Utc};
use futures::{Stream, TryStreamExt, future, stream};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::local::LocalFile;
use crate::records::{FileRecord, Rest};
use crate::{Client, has_code};

/// The body of `/search-files`: only the filters given go.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchQuery {
    /// Words to find inside files that were read (moments).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Words in the file's name, tags or description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Only files of exactly this name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
    /// Only these files (1 to 200).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_ids: Option<Vec<Uuid>>,
    /// Kinds like `Video`, `Pdf`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// A folder path; the folders inside it count too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_public: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uploaded_after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uploaded_before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken_after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken_before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_duration: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_duration: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_tempo: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tempo: Option<f64>,
    /// A musical key, like `F# minor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within: Option<Within>,
    /// `newest` (the service's default), `oldest`, `largest`, `smallest` or `name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
    /// Files others share with the caller: `include` or `only` (left out: only the caller's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// A `nextCursor`: the page right after it (not with `offset`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl SearchQuery {
    /// The newest `limit` files that `text`, `folder` and `types` choose.
    pub fn newest(
        text: Option<&str>,
        folder: Option<&str>,
        types: Option<Vec<String>>,
        limit: u32,
    ) -> SearchQuery {
        SearchQuery {
            text: text.map(str::to_string),
            folder: folder.map(str::to_string),
            types,
            sort: Some("newest".to_string()),
            limit: Some(limit),
            ..SearchQuery::default()
        }
    }
}

/// Where a photo was taken, in degrees.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Within {
    pub south: f64,
    pub west: f64,
    pub north: f64,
    pub east: f64,
}

/// The answer of `/search-files`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    pub files: Vec<FoundFile>,
    /// The `offset` of the next page; null on the last or when the page was asked by `cursor`.
    pub next_offset: Option<i64>,
    /// The `cursor` of the next page; null on the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
    /// Folders whose names match `text`, when it was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folders: Option<Vec<FoundFolder>>,
    /// With `query`: the moments found, best first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moments: Option<Vec<Moment>>,
}

/// A file `/search-files` found. The fields read here are typed; the rest (what is known of it:
/// tags, duration, place...) kept as the service sent them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoundFile {
    pub id: Uuid,
    pub file_name: String,
    pub file_size: u64,
    pub mime_type: String,
    /// Video, Audio, Image, Pdf, Text, Archive, Other.
    #[serde(rename = "type")]
    pub kind: String,
    pub is_public: bool,
    /// A public file's permanent link.
    pub download_url: Option<String>,
    /// Its folder's path.
    pub folder: String,
    /// Its folder; none at the top, and for a file shared with the caller.
    #[serde(default)]
    pub folder_id: Option<Uuid>,
    pub insert_time: DateTime<Utc>,
    pub modified_time: Option<DateTime<Utc>>,
    #[serde(flatten)]
    pub rest: Rest,
}

impl From<FoundFile> for FileRecord {
    fn from(found: FoundFile) -> FileRecord {
        FileRecord {
            id: found.id,
            file_name: found.file_name,
            file_size: found.file_size,
            mime_type: found.mime_type,
            kind: found.kind,
            is_public: found.is_public,
            download_url: found.download_url,
            insert_time: found.insert_time,
            modified_time: found.modified_time,
            folder_id: found.folder_id,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoundFolder {
    pub id: Uuid,
    pub name: String,
    pub path: String,
    pub file_count: u64,
}

/// A moment inside a file: a page, a span of time, or a passage.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Moment {
    pub file_id: Uuid,
    pub entry_type: String,
    pub text: String,
    pub at: Option<f64>,
    pub until: Option<f64>,
    pub page: Option<u32>,
}

impl Client {
    /// `/search-files`.
    pub async fn search(&self, query: &SearchQuery) -> Result<Found> {
        self.post("/search-files", query).await
    }

    /// The library's file `id` (not one in the trash, nor one shared with the caller): one
    /// file asked for, not the library listed.
    pub async fn library_file(&self, id: Uuid) -> Result<Option<FileRecord>> {
        let query = SearchQuery {
            file_ids: Some(vec![id]),
            ..SearchQuery::default()
        };
        Ok(self
            .search(&query)
            .await?
            .files
            .into_iter()
            .next()
            .map(FileRecord::from))
    }

    /// Every file `query` finds from where it starts on, a page of `/search-files` at a time
    /// (each after the last one's `nextCursor`), each page asked for only as the stream is read
    /// that far.
    pub fn found_files(&self, query: SearchQuery) -> impl Stream<Item = Result<FoundFile>> + '_ {
        stream::try_unfold(Some(query), move |next| async move {
            let Some(query) = next else {
                return anyhow::Ok(None);
            };
            let found = self.search(&query).await?;
            let next = found.next_cursor.map(|cursor| SearchQuery {
                cursor: Some(cursor),
                offset: None,
                ..query
            });
            let files = stream::iter(found.files.into_iter().map(Ok::<_, anyhow::Error>));
            Ok(Some((files, next)))
        })
        .try_flatten()
    }

    /// The library's file stored from `file` (the same name, size and modified time), found by
    /// its name and size rather than by listing the library.
    pub async fn stored_copy(&self, file: &LocalFile) -> Result<Option<FileRecord>> {
        let size = i64::try_from(file.size)?;
        let query = SearchQuery {
            file_name: Some(file.name.clone()),
            min_size: Some(size),
            max_size: Some(size),
            limit: Some(200),
            ..SearchQuery::default()
        };
        let stored = self
            .found_files(query)
            .map_ok(FileRecord::from)
            .try_filter(|r| future::ready(file.is_stored_as(r)));
        match std::pin::pin!(stored).try_next().await {
            // A name the drive refuses is no stored file's: sending it fails with the drive's
            // own sentence, for that file alone.
            Err(e) if has_code(&e, "invalid_field") => Ok(None),
            answer => answer,
        }
    }
}
