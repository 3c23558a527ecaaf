//! File requests, typed: links anyone can send files to (`/create-file-request`,
//! `/select-file-requests`, `/set-file-request-open`).

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::Client;
use crate::organize::FolderRef;

/// The body of `/create-file-request`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewRequest {
    pub title: String,
    /// Shown to whoever opens the link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Where the files land; a new folder named for the title when not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expire_time: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accept_types: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_files_per_sender: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_arrival: Option<OnArrival>,
}

/// A job run on each file that arrives.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OnArrival {
    pub job_type: String,
    /// Its settings; null for the defaults.
    pub options: Value,
}

/// A file request as `/create-file-request` answers it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedRequest {
    pub id: Uuid,
    pub title: String,
    pub message: Option<String>,
    pub expire_time: Option<DateTime<Utc>>,
    pub max_bytes: Option<u64>,
    pub folder: FolderRef,
    /// The page to share.
    pub url: String,
    pub accept_types: Option<Vec<String>>,
    pub max_files_per_sender: Option<u32>,
    pub on_arrival: Option<Value>,
}

/// A file request as `/select-file-requests` answers it, with what arrived.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRequest {
    pub id: Uuid,
    pub title: String,
    pub message: Option<String>,
    pub insert_time: DateTime<Utc>,
    pub open: bool,
    pub close_time: Option<DateTime<Utc>>,
    pub expire_time: Option<DateTime<Utc>>,
    pub max_bytes: Option<u64>,
    pub received_bytes: u64,
    pub folder: FolderRef,
    /// Each sender's drop, newest first.
    pub drops: Vec<RequestDrop>,
    pub url: String,
    pub accept_types: Option<Vec<String>>,
    pub max_files_per_sender: Option<u32>,
    pub on_arrival: Option<Value>,
}

/// What one sender sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestDrop {
    pub id: Uuid,
    pub sender_name: String,
    pub note: Option<String>,
    pub arrived_time: DateTime<Utc>,
    pub finish_time: Option<DateTime<Utc>>,
    pub viewed: bool,
    pub files: Vec<DroppedFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DroppedFile {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub kind: String,
    pub file_name: String,
    pub file_size: u64,
    pub mime_type: String,
    /// The `onArrival` job run on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<Uuid>,
}

/// The answer of `/select-file-requests`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileRequests {
    pub requests: Vec<FileRequest>,
}

/// The answer of `/set-file-request-open`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestOpen {
    pub id: Uuid,
    /// Still closed after asking to open when it is past its expiry.
    pub open: bool,
    pub close_time: Option<DateTime<Utc>>,
    pub expire_time: Option<DateTime<Utc>>,
}

impl Client {
    /// `/create-file-request`.
    pub async fn create_request(&self, request: &NewRequest) -> Result<CreatedRequest> {
        self.post("/create-file-request", request).await
    }

    /// `/select-file-requests`: every request, or those landing in `folder`.
    pub async fn requests(&self, folder: Option<&str>) -> Result<FileRequests> {
        #[derive(Serialize)]
        struct Body<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            folder: Option<&'a str>,
        }
        self.post("/select-file-requests", &Body { folder }).await
    }

    /// `/set-file-request-open`.
    pub async fn set_request_open(&self, id: Uuid, open: bool) -> Result<RequestOpen> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            request_id: Uuid,
            open: bool,
        }
        self.post("/set-file-request-open", &Body { request_id: id, open })
            .await
    }
}
