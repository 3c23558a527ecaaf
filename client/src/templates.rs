//! Job templates, typed: `/create-job-template`, `/select-job-templates`,
//! `/delete-job-template`. A template runs on files through [`crate::jobs::NewJob`]'s
//! `template_id`.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::Client;

/// A pipeline kept under a name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    pub id: Uuid,
    pub name: String,
    /// The steps with every default filled in.
    pub steps: Value,
    pub create_time: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MadeTemplate {
    pub template: Template,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Templates {
    /// By name.
    pub templates: Vec<Template>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeletedTemplate {
    pub deleted: Uuid,
}

#[derive(Serialize)]
struct NewTemplate<'a> {
    name: &'a str,
    steps: &'a Value,
}

#[derive(Serialize)]
struct TemplateRef {
    id: Uuid,
}

impl Client {
    /// `/create-job-template`: `steps` as the service takes them.
    pub async fn create_template(&self, name: &str, steps: &Value) -> Result<MadeTemplate> {
        self.post("/create-job-template", &NewTemplate { name, steps })
            .await
    }

    /// `/select-job-templates`.
    pub async fn templates(&self) -> Result<Templates> {
        self.post_empty("/select-job-templates").await
    }

    /// `/delete-job-template`.
    pub async fn delete_template(&self, id: Uuid) -> Result<DeletedTemplate> {
        self.post("/delete-job-template", &TemplateRef { id }).await
    }
}
