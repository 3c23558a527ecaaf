//! Folder rules, typed: `/create-folder-rule`, `/select-folder-rules`,
//! `/set-folder-rule-paused`, `/delete-folder-rule`.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::Client;
use crate::organize::FolderRef;

/// A job run on every file that lands in a folder.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub id: Uuid,
    pub folder: FolderRef,
    pub job_type: String,
    pub options: Value,
    pub template_id: Option<Uuid>,
    pub request_id: Option<Uuid>,
    pub result_folder_id: Option<Uuid>,
    pub paused: bool,
    pub files_taken: i64,
    pub files_waiting: i64,
    pub create_time: DateTime<Utc>,
}

/// What a backfill came to (or would, on a dry run).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Backfill {
    pub files: u64,
    pub estimate_seconds: u64,
    pub files_taken: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MadeRule {
    pub rule: Option<Rule>,
    pub backfill: Option<Backfill>,
    pub dry_run: bool,
}

/// A rule to make: the folder (a path) and the job, as `/create-file-job` takes one (a type
/// with `options`, `steps`, or a template).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewRule {
    pub folder: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_folder_id: Option<Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backfill: Option<BackfillBudget>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// How much of the files already in the folder a new rule takes.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackfillBudget {
    /// Minutes of estimated job time, oldest file first.
    pub budget_minutes: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rules {
    /// Oldest first.
    pub rules: Vec<Rule>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangedRule {
    pub rule: Rule,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeletedRule {
    pub deleted: Uuid,
}

#[derive(Serialize)]
struct RuleRef {
    id: Uuid,
}

#[derive(Serialize)]
struct Pause {
    id: Uuid,
    paused: bool,
}

impl Client {
    /// `/create-folder-rule`.
    pub async fn create_rule(&self, rule: &NewRule) -> Result<MadeRule> {
        self.post("/create-folder-rule", rule).await
    }

    /// `/select-folder-rules`: every rule of the caller's.
    pub async fn rules(&self) -> Result<Rules> {
        self.post_empty("/select-folder-rules").await
    }

    /// `/set-folder-rule-paused`.
    pub async fn pause_rule(&self, id: Uuid, paused: bool) -> Result<ChangedRule> {
        self.post("/set-folder-rule-paused", &Pause { id, paused }).await
    }

    /// `/delete-folder-rule`.
    pub async fn delete_rule(&self, id: Uuid) -> Result<DeletedRule> {
        self.post("/delete-folder-rule", &RuleRef { id }).await
    }
}
