//! Reading one file, typed: `/read-file` answers a file's text, a picture or frame of it, or
//! what is said in it, a part at a time.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Client;

/// The body of `/read-file`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadQuery {
    pub file_id: Uuid,
    /// Seconds into a video or track.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_page: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_page: Option<u32>,
    /// Where in a text to go on from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

/// The answer of `/read-file`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Read {
    pub id: Uuid,
    pub file_name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub mime_type: String,
    pub file_size: u64,
    /// What was read, in a sentence.
    pub note: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ReadImage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Pages>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<Vec<Said>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_at: Option<f64>,
}

/// A picture or frame, base64-encoded.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadImage {
    pub data: String,
    pub mime_type: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pages {
    pub from: u32,
    pub to: u32,
    pub total: u32,
}

/// What is said between two moments, in seconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Said {
    pub at: f64,
    pub until: f64,
    pub text: String,
}

impl Client {
    /// `/read-file`.
    pub async fn read_file(&self, query: &ReadQuery) -> Result<Read> {
        self.post("/read-file", query).await
    }
}
