//! Organizing, typed: moving and tagging files, descriptions, collections (playlists and
//! galleries), archives, views by others, covers and thumbnails, and imports from a link.

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::Client;
use crate::jobs::CreatedJob;

/// A folder, as answers name it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FolderRef {
    pub id: Uuid,
    pub path: String,
}

/// The answer of `/move-files`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Moved {
    pub moved: Vec<Uuid>,
    /// Null for the top.
    pub folder: Option<FolderRef>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tag {
    pub id: Uuid,
    pub text: String,
}

/// The answer of `/tag-files`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tagged {
    pub updated: Vec<Uuid>,
    pub tags: Vec<Tag>,
}

/// The answer of `/update-file-description`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Described {
    pub id: Uuid,
    pub description: Option<String>,
}

/// The answer of `/select-collections`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Collections {
    pub folders: Vec<FolderSummary>,
    pub playlists: Vec<PlaylistSummary>,
    pub galleries: Vec<GallerySummary>,
    pub tags: Vec<TagSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FolderSummary {
    pub id: Uuid,
    pub path: String,
    pub file_count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaylistSummary {
    pub id: Uuid,
    pub title: String,
    pub is_public: bool,
    pub file_count: u64,
    pub cover_id: Option<Uuid>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GallerySummary {
    pub id: Uuid,
    pub title: String,
    pub description: Option<String>,
    pub is_public: bool,
    pub file_count: u64,
    pub featured_count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagSummary {
    pub id: Uuid,
    pub text: String,
    pub file_count: u64,
}

/// A playlist or a gallery: their routes differ by name only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectionKind {
    Playlist,
    Gallery,
}

impl CollectionKind {
    pub fn name(self) -> &'static str {
        match self {
            CollectionKind::Playlist => "playlist",
            CollectionKind::Gallery => "gallery",
        }
    }

    fn routes(self) -> [&'static str; 3] {
        match self {
            CollectionKind::Playlist => ["/create-playlist", "/add-to-playlist", "/reorder-playlist"],
            CollectionKind::Gallery => ["/create-gallery", "/add-to-gallery", "/reorder-gallery"],
        }
    }
}

/// A new playlist or gallery (`featured_ids` and `description` are a gallery's only).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewCollection {
    pub title: String,
    pub file_ids: Vec<Uuid>,
    pub is_public: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub featured_ids: Option<Vec<Uuid>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A playlist or gallery as its create, add and reorder routes answer it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Collection {
    pub id: Uuid,
    pub title: String,
    /// A gallery's (null when it has none); absent for a playlist.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Value>,
    pub is_public: bool,
    pub file_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub featured_count: Option<u64>,
    /// Absent from a reorder's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_ids: Option<Vec<Uuid>>,
    /// Files passed over (not admissible); absent from a reorder's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Vec<Uuid>>,
}

/// A field that is there, null included, as `Some`: a gallery's `"description": null` prints
/// back as the service wrote it, where a plain `Option` would drop it.
fn present<'de, D: serde::Deserializer<'de>>(field: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(field).map(Some)
}

/// What an archive is made of.
#[derive(Debug, Clone)]
pub enum ArchiveOf {
    Files(Vec<Uuid>),
    Gallery(Uuid),
    Playlist(Uuid),
}

/// The body of `/select-file-views`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ViewsQuery {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_ids: Option<Vec<Uuid>>,
    /// A day, like 2026-03-01.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// The answer of `/select-file-views`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Views {
    pub since: NaiveDate,
    pub files: Vec<Viewed>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Viewed {
    pub id: Uuid,
    pub file_name: String,
    pub is_public: bool,
    /// Since `since`.
    pub views: u64,
    pub all_views: u64,
    pub last_view_time: Option<DateTime<Utc>>,
    pub viewers: Vec<Viewer>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Viewer {
    pub handle: Option<String>,
    pub display_name: Option<String>,
    pub last_day: NaiveDate,
    pub views: u64,
}

/// What a cover goes on.
#[derive(Debug, Clone, Copy)]
pub enum Covered {
    Track(Uuid),
    Playlist(Uuid),
}

/// The answer of `/set-cover`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtSet {
    pub id: Uuid,
    pub image_id: Option<Uuid>,
}

/// A video's thumbnail: a picture of the drive's, or the frame at a moment.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum FrameAt {
    Seconds(f64),
    /// A clock form like `1:02.5`, for the drive to read.
    Clock(String),
}

/// The answer of `/set-video-thumbnail`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThumbnailSet {
    pub id: Uuid,
    pub image_id: Option<Uuid>,
    /// The job that takes the frame, when one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<CreatedJob>,
}

/// The body of `/import-from-url`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Import {
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
}

impl Client {
    /// `/move-files`: `ids` to the folder at `folder` (`/` is the top), made if needed.
    pub async fn move_files(&self, ids: &[Uuid], folder: &str) -> Result<Moved> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            file_ids: &'a [Uuid],
            folder: &'a str,
        }
        self.post(
            "/move-files",
            &Body {
                file_ids: ids,
                folder,
            },
        )
        .await
    }

    /// `/tag-files`: puts `tags` on `ids`, or takes them off.
    pub async fn tag_files(&self, ids: &[Uuid], tags: &[String], remove: bool) -> Result<Tagged> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            file_ids: &'a [Uuid],
            tags: &'a [String],
            action: &'a str,
        }
        let action = if remove { "remove" } else { "add" };
        self.post(
            "/tag-files",
            &Body {
                file_ids: ids,
                tags,
                action,
            },
        )
        .await
    }

    /// `/update-file-description` (empty clears it).
    pub async fn describe(&self, id: Uuid, description: &str) -> Result<Described> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            file_id: Uuid,
            description: &'a str,
        }
        let body = Body {
            file_id: id,
            description,
        };
        self.post("/update-file-description", &body).await
    }

    /// `/select-collections`.
    pub async fn collections(&self) -> Result<Collections> {
        self.post_empty("/select-collections").await
    }

    /// `/create-playlist` or `/create-gallery`.
    pub async fn create_collection(&self, kind: CollectionKind, new: &NewCollection) -> Result<Collection> {
        self.post(kind.routes()[0], new).await
    }

    /// `/add-to-playlist` or `/add-to-gallery` (`featured` for a gallery only).
    pub async fn add_to_collection(
        &self,
        kind: CollectionKind,
        id: Uuid,
        ids: &[Uuid],
        featured: &[Uuid],
    ) -> Result<Collection> {
        let body = collection_body(
            kind,
            id,
            ids,
            (kind == CollectionKind::Gallery).then_some(featured),
        );
        self.post(kind.routes()[1], &body).await
    }

    /// `/reorder-playlist` or `/reorder-gallery`: the named files first, in that order.
    pub async fn reorder_collection(
        &self,
        kind: CollectionKind,
        id: Uuid,
        ids: &[Uuid],
    ) -> Result<Collection> {
        self.post(kind.routes()[2], &collection_body(kind, id, ids, None))
            .await
    }

    /// `/create-archive-request`: a zip of `of`, made by a job.
    pub async fn archive(&self, of: &ArchiveOf, title: Option<&str>) -> Result<CreatedJob> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            file_ids: Option<&'a [Uuid]>,
            #[serde(skip_serializing_if = "Option::is_none")]
            gallery_id: Option<Uuid>,
            #[serde(skip_serializing_if = "Option::is_none")]
            playlist_id: Option<Uuid>,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
        }
        let mut body = Body {
            file_ids: None,
            gallery_id: None,
            playlist_id: None,
            title,
        };
        match of {
            ArchiveOf::Files(ids) => body.file_ids = Some(ids),
            ArchiveOf::Gallery(id) => body.gallery_id = Some(*id),
            ArchiveOf::Playlist(id) => body.playlist_id = Some(*id),
        }
        self.post("/create-archive-request", &body).await
    }

    /// `/select-file-views`: opens by others, most opened first.
    pub async fn views(&self, query: &ViewsQuery) -> Result<Views> {
        self.post("/select-file-views", query).await
    }

    /// `/set-cover`: `image` on a track or a playlist; `None` takes the chosen cover off.
    pub async fn set_cover(&self, on: Covered, image: Option<Uuid>) -> Result<ArtSet> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            #[serde(skip_serializing_if = "Option::is_none")]
            file_id: Option<Uuid>,
            #[serde(skip_serializing_if = "Option::is_none")]
            playlist_id: Option<Uuid>,
            image_id: Option<Uuid>,
        }
        let body = match on {
            Covered::Track(id) => Body {
                file_id: Some(id),
                playlist_id: None,
                image_id: image,
            },
            Covered::Playlist(id) => Body {
                file_id: None,
                playlist_id: Some(id),
                image_id: image,
            },
        };
        self.post("/set-cover", &body).await
    }

    /// `/set-video-thumbnail`: a picture, the frame at a moment (a job takes it), or neither
    /// for the poster taken from the video again.
    pub async fn set_video_thumbnail(
        &self,
        video: Uuid,
        image: Option<Uuid>,
        at: Option<FrameAt>,
    ) -> Result<ThumbnailSet> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            file_id: Uuid,
            image_id: Option<Uuid>,
            at: Option<FrameAt>,
        }
        let body = Body {
            file_id: video,
            image_id: image,
            at,
        };
        self.post("/set-video-thumbnail", &body).await
    }

    /// `/import-from-url`: the drive fetches the link (an `import` job).
    pub async fn import(&self, import: &Import) -> Result<CreatedJob> {
        self.post("/import-from-url", import).await
    }
}

/// The body of a playlist's or gallery's add or reorder.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Members<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    playlist_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gallery_id: Option<Uuid>,
    file_ids: &'a [Uuid],
    #[serde(skip_serializing_if = "Option::is_none")]
    featured_ids: Option<&'a [Uuid]>,
}

fn collection_body<'a>(
    kind: CollectionKind,
    id: Uuid,
    ids: &'a [Uuid],
    featured: Option<&'a [Uuid]>,
) -> Members<'a> {
    Members {
        playlist_id: (kind == CollectionKind::Playlist).then_some(id),
        gallery_id: (kind == CollectionKind::Gallery).then_some(id),
        file_ids: ids,
        featured_ids: featured,
    }
}
