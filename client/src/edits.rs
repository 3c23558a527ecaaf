//! The everyday verbs, typed: rename and copy files, move and delete folders, rename, empty
//! out or delete a playlist or gallery, delete a tag or a file request, close a review. Folders
//! and tags are named as people write them (a path, a tag's text) and looked up in
//! `/select-collections`.

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::Client;
use crate::organize::{CollectionKind, FolderRef};
use crate::records::FileRecord;

/// One copy `/copy-files` made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Copy {
    /// The file copied.
    pub from: Uuid,
    /// The copy.
    pub file: FileRecord,
}

/// The answer of `/copy-files`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Copies {
    pub copies: Vec<Copy>,
    /// Null for the top.
    pub folder: Option<FolderRef>,
}

/// The answer of `/move-folder`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MovedFolder {
    pub folder: FolderRef,
    /// Where it was, like `/a/b/`.
    pub from: String,
}

/// The answer of `/delete-folder`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeletedFolder {
    pub deleted: FolderRef,
    /// The files it sent to the trash.
    pub trashed: Vec<Uuid>,
}

/// A playlist or gallery after a rename or a removal.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edited {
    pub id: Uuid,
    pub title: String,
    pub is_public: bool,
    pub file_count: u64,
    /// After a removal: the ids given that it held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<Vec<Uuid>>,
}

/// What a delete route answers: the id deleted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Deleted {
    pub deleted: Uuid,
}

/// The answer of `/close-file-review`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedReview {
    pub id: Uuid,
    pub close_time: chrono::DateTime<chrono::Utc>,
}

/// A body naming one playlist (`playlistId`) or gallery (`galleryId`).
fn named(kind: CollectionKind, id: Uuid) -> serde_json::Value {
    let field = format!("{}Id", kind.name());
    serde_json::Value::Object(serde_json::Map::from_iter([(field, json!(id))]))
}

/// `path` as stored listings write it: a leading slash, no trailing one (`/` stays `/`).
fn normal(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        "/".to_string()
    } else if trimmed.starts_with('/') {
        trimmed.to_string()
    } else {
        format!("/{trimmed}")
    }
}

impl Client {
    /// `/rename-file`.
    pub async fn rename_file(&self, id: Uuid, name: &str) -> Result<FileRecord> {
        self.post("/rename-file", &json!({ "fileId": id, "fileName": name }))
            .await
    }

    /// `/copy-files`: `ids` into the folder at `folder` (`/` is the top), made if needed.
    pub async fn copy_files(&self, ids: &[Uuid], folder: &str) -> Result<Copies> {
        self.post("/copy-files", &json!({ "fileIds": ids, "folder": folder }))
            .await
    }

    /// The id of the caller's folder at `path`.
    pub async fn folder_id(&self, path: &str) -> Result<Uuid> {
        let wanted = normal(path);
        self.collections()
            .await?
            .folders
            .into_iter()
            .find(|f| normal(&f.path) == wanted)
            .map(|f| f.id)
            .ok_or_else(|| anyhow!("you have no folder {wanted}"))
    }

    /// `/move-folder`: the folder at `from` (and all in it) to the path `to`.
    pub async fn move_folder(&self, from: &str, to: &str) -> Result<MovedFolder> {
        let id = self.folder_id(from).await?;
        self.post("/move-folder", &json!({ "folderId": id, "path": to }))
            .await
    }

    /// `/delete-folder`: the folder at `path`, its files to the trash.
    pub async fn delete_folder(&self, path: &str) -> Result<DeletedFolder> {
        let id = self.folder_id(path).await?;
        self.post("/delete-folder", &json!({ "folderId": id })).await
    }

    /// `/rename-playlist` or `/rename-gallery` (`description` a gallery's only: empty clears it).
    pub async fn rename_collection(
        &self,
        kind: CollectionKind,
        id: Uuid,
        title: &str,
        description: Option<&str>,
    ) -> Result<Edited> {
        let mut body = named(kind, id);
        body["title"] = json!(title);
        if let Some(description) = description {
            body["description"] = json!(description);
        }
        self.post(&format!("/rename-{}", kind.name()), &body).await
    }

    /// `/remove-from-playlist` or `/remove-from-gallery`.
    pub async fn remove_from_collection(
        &self,
        kind: CollectionKind,
        id: Uuid,
        ids: &[Uuid],
    ) -> Result<Edited> {
        let mut body = named(kind, id);
        body["fileIds"] = json!(ids);
        self.post(&format!("/remove-from-{}", kind.name()), &body).await
    }

    /// `/delete-playlist` or `/delete-gallery`.
    pub async fn delete_collection(&self, kind: CollectionKind, id: Uuid) -> Result<Deleted> {
        let body = named(kind, id);
        self.post(&format!("/delete-{}", kind.name()), &body).await
    }

    /// `/delete-tag`, the tag named `text` (case aside).
    pub async fn delete_tag(&self, text: &str) -> Result<Deleted> {
        let id = self
            .collections()
            .await?
            .tags
            .into_iter()
            .find(|t| t.text.to_lowercase() == text.trim().to_lowercase())
            .map(|t| t.id)
            .ok_or_else(|| anyhow!("you have no tag {text}"))?;
        self.post("/delete-tag", &json!({ "tagId": id })).await
    }

    /// `/delete-file-request`.
    pub async fn delete_request(&self, id: Uuid) -> Result<Deleted> {
        self.post("/delete-file-request", &json!({ "requestId": id }))
            .await
    }

    /// `/close-file-review`.
    pub async fn close_review(&self, id: Uuid) -> Result<ClosedReview> {
        self.post("/close-file-review", &json!({ "reviewId": id })).await
    }
}

#[cfg(test)]
mod tests {
    use super::normal;

    #[test]
    fn folder_paths_are_compared_as_stored() {
        assert_eq!(normal("/a/b/"), "/a/b");
        assert_eq!(normal("a/b"), "/a/b");
        assert_eq!(normal("/"), "/");
    }
}
