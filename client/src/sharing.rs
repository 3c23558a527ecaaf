//! Sharing with people, typed: share and unshare files or a folder by handle, what the caller
//! shares, what others share with it, and the caller's profile.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::Client;
use crate::records::FileRecord;

/// What is shared: files, or a folder (named by path, looked up in `/select-collections`).
#[derive(Debug, Clone)]
pub enum What {
    Files(Vec<Uuid>),
    Folder(String),
}

/// A share as `/share-files`, `/unshare-files` and `/select-file-shares` answer it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Share {
    pub id: Uuid,
    /// `{ id, fileName }`, or null for a folder's share.
    pub file: Option<Value>,
    /// `{ id, path }`, or null for a file's share.
    pub folder: Option<Value>,
    pub handle: String,
    pub display_name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shares {
    pub shares: Vec<Share>,
}

/// Who shared a file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Owner {
    pub handle: String,
    pub display_name: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharedFile {
    pub file: FileRecord,
    pub owner: Owner,
    pub shared_time: chrono::DateTime<chrono::Utc>,
}

/// A page of `/select-shared-files`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharedFiles {
    pub files: Vec<SharedFile>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub handle: String,
    pub display_name: Option<String>,
    pub show_views: bool,
}

impl Client {
    /// The body's `fileIds` or `folderId` for `what`.
    async fn naming(&self, what: &What) -> Result<Value> {
        Ok(match what {
            What::Files(ids) => json!({ "fileIds": ids }),
            What::Folder(path) => json!({ "folderId": self.folder_id(path).await? }),
        })
    }

    /// `/share-files`: `what` with the accounts of `handles`.
    pub async fn share(&self, what: &What, handles: &[String]) -> Result<Shares> {
        let mut body = self.naming(what).await?;
        body["handles"] = json!(handles);
        self.post("/share-files", &body).await
    }

    /// `/unshare-files`: from `handles`, or from everyone when empty.
    pub async fn unshare(&self, what: &What, handles: &[String]) -> Result<Shares> {
        let mut body = self.naming(what).await?;
        if !handles.is_empty() {
            body["handles"] = json!(handles);
        }
        self.post("/unshare-files", &body).await
    }

    /// `/select-file-shares`: what the caller shares, with whom.
    pub async fn file_shares(&self) -> Result<Shares> {
        self.post("/select-file-shares", &json!({})).await
    }

    /// `/select-shared-files`: one page of what others share with the caller.
    pub async fn shared_files(&self, cursor: Option<&str>) -> Result<SharedFiles> {
        let mut body = json!({ "limit": 100 });
        if let Some(cursor) = cursor {
            body["cursor"] = json!(cursor);
        }
        self.post("/select-shared-files", &body).await
    }

    /// `/select-profile`.
    pub async fn profile(&self) -> Result<Profile> {
        self.post("/select-profile", &json!({})).await
    }

    /// `/update-profile`: what is given (an empty name clears it).
    pub async fn update_profile(
        &self,
        display_name: Option<&str>,
        show_views: Option<bool>,
    ) -> Result<Profile> {
        let mut body = json!({});
        if let Some(name) = display_name {
            body["displayName"] = json!(name);
        }
        if let Some(show) = show_views {
            body["showViews"] = json!(show);
        }
        self.post("/update-profile", &body).await
    }
}
