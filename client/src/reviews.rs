//! Reviews, typed: a link to watch a video or track and leave notes at its moments
//! (`/create-file-review`, `/select-file-reviews`), and the owner's answers to the notes
//! (`/reply-to-review-note`, `/set-review-note-resolved`).

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Client;

/// A review with its notes, as `/create-file-review` and `/select-file-reviews` answer it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Review {
    pub id: Uuid,
    pub title: String,
    pub file: ReviewedFile,
    /// The page to share.
    pub url: String,
    pub insert_time: DateTime<Utc>,
    /// In the order of the timeline.
    pub notes: Vec<Note>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewedFile {
    pub id: Uuid,
    pub file_name: String,
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    pub id: Uuid,
    pub reviewer: Reviewer,
    pub text: String,
    pub seconds: f64,
    /// Like `00:01:02.500`.
    pub timecode: String,
    pub resolved: bool,
    pub resolved_time: Option<DateTime<Utc>>,
    pub insert_time: DateTime<Utc>,
    pub replies: Vec<Reply>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reply {
    pub id: Uuid,
    pub reviewer: Reviewer,
    pub text: String,
    pub insert_time: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reviewer {
    pub name: String,
    /// The review's owner.
    pub owner: bool,
}

/// The answer of `/select-file-reviews`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reviews {
    pub reviews: Vec<Review>,
}

/// The answer of `/set-review-note-resolved`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    pub id: Uuid,
    pub resolved: bool,
    pub resolved_time: Option<DateTime<Utc>>,
}

impl Client {
    /// `/create-file-review` of the video or track `file_id`; its title is the file's name
    /// unless given.
    pub async fn create_review(&self, file_id: Uuid, title: Option<&str>) -> Result<Review> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            file_id: Uuid,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
        }
        self.post("/create-file-review", &Body { file_id, title }).await
    }

    /// `/select-file-reviews`: every review, or those of `file_id`.
    pub async fn reviews(&self, file_id: Option<Uuid>) -> Result<Reviews> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            #[serde(skip_serializing_if = "Option::is_none")]
            file_id: Option<Uuid>,
        }
        self.post("/select-file-reviews", &Body { file_id }).await
    }

    /// `/reply-to-review-note`, as the review's owner.
    pub async fn reply_to_note(&self, note_id: Uuid, text: &str) -> Result<Reply> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            note_id: Uuid,
            text: &'a str,
        }
        self.post("/reply-to-review-note", &Body { note_id, text }).await
    }

    /// `/set-review-note-resolved`.
    pub async fn resolve_note(&self, note_id: Uuid, resolved: bool) -> Result<Resolved> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            note_id: Uuid,
            resolved: bool,
        }
        self.post("/set-review-note-resolved", &Body { note_id, resolved })
            .await
    }
}
