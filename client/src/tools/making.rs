//! The tools that make something to share: a file request (a link anyone can send files to), a
//! review (a link to watch a video or track and leave notes), an image drawn from a prompt, and
//! what one of the user's job templates makes of chosen files. What they make reaches the user as
//! links, through the host's [`Effects`].

use std::time::Duration;

use anyhow::{Result, bail};
use chrono::{TimeDelta, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::choosing::{Selection, done, link_to};
use super::{Effects, FileType};
use crate::Client;
use crate::generations::{GenerationStatus, NewImage};
use crate::jobs::NewJob;
use crate::requests::NewRequest;

/// The longest an image is waited for; past it the caller is told its id, to wait for.
const PATIENCE: Duration = Duration::from_secs(180);

/// The text of `value`, trimmed; `None` when empty.
fn given(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// `value` trimmed, refused when empty.
fn required(value: &str, field: &str) -> Result<String> {
    match value.trim() {
        "" => bail!("{field} is required"),
        value => Ok(value.to_string()),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskForFiles {
    /// What is asked for, like Slides for the offsite.
    pub title: String,
    /// Shown to whoever opens the link.
    pub message: Option<String>,
    /// Where the files land, like /inbox/slides (default a new folder named for the title).
    pub folder: Option<String>,
    /// Stop taking files after this many days (default never).
    #[schemars(range(min = 1, max = 365))]
    pub days: Option<i64>,
}

pub(super) async fn ask_for_files(
    client: &Client,
    effects: &mut impl Effects,
    input: AskForFiles,
) -> Result<Value> {
    let title = required(&input.title, "title")?;
    let request = NewRequest {
        title: title.clone(),
        message: given(input.message),
        folder: given(input.folder),
        expire_time: input
            .days
            .map(|days| Utc::now() + TimeDelta::days(days.clamp(1, 365))),
        ..NewRequest::default()
    };
    let made = client.create_request(&request).await?;
    Ok(json!({
        "request": made.title, "folder": made.folder.path, "expires": made.expire_time,
        "link": effects.page(&made.url, &format!("file request: {title}")),
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShareForReview {
    /// Words in the file's name, like cut 3.
    pub text: String,
    /// A folder path like /edits.
    pub folder: Option<String>,
    /// The review's title (default the file's name).
    pub title: Option<String>,
}

pub(super) async fn share_for_review(
    client: &Client,
    effects: &mut impl Effects,
    input: ShareForReview,
) -> Result<Value> {
    let text = required(&input.text, "text")?;
    let selection = Selection {
        text: Some(text),
        folder: input.folder,
        types: Some(vec![FileType::Video, FileType::Audio]),
    };
    let found = client.search(&selection.search(1)).await?;
    let Some(file) = found.files.first() else {
        bail!("no video or track's name has those words: look with list_files");
    };
    let title = given(input.title);
    let made = client.create_review(file.id, title.as_deref()).await?;
    Ok(json!({
        "review": made.title, "file": made.file.file_name,
        "link": effects.page(&made.url, &format!("review: {}", made.title)),
    }))
}

/// The shapes an image may take.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum AspectRatio {
    #[serde(rename = "1:1")]
    Square,
    #[serde(rename = "3:2")]
    Landscape3x2,
    #[serde(rename = "2:3")]
    Portrait2x3,
    #[serde(rename = "16:9")]
    Wide,
    #[serde(rename = "9:16")]
    Tall,
    #[serde(rename = "4:3")]
    Landscape4x3,
    #[serde(rename = "3:4")]
    Portrait3x4,
}

impl AspectRatio {
    fn as_str(self) -> &'static str {
        match self {
            AspectRatio::Square => "1:1",
            AspectRatio::Landscape3x2 => "3:2",
            AspectRatio::Portrait2x3 => "2:3",
            AspectRatio::Wide => "16:9",
            AspectRatio::Tall => "9:16",
            AspectRatio::Landscape4x3 => "4:3",
            AspectRatio::Portrait3x4 => "3:4",
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MakeImage {
    /// What to draw.
    pub prompt: String,
    pub aspect_ratio: Option<AspectRatio>,
}

pub(super) async fn make_image(
    client: &Client,
    effects: &mut impl Effects,
    input: MakeImage,
) -> Result<Value> {
    let asked = NewImage {
        prompt: required(&input.prompt, "prompt")?,
        aspect_ratio: input.aspect_ratio.map(|r| r.as_str().to_string()),
        ..NewImage::default()
    };
    let started = client.generate_image(&asked).await?;
    let id = started.id;
    let generation = client
        .wait_for_generation(id, Duration::from_secs(2), PATIENCE)
        .await?;
    match generation.status {
        GenerationStatus::Working => Ok(json!({
            "id": id, "status": "working",
            "next": "Not drawn yet: wait_for image_finished with this id, or tell the user it is on its way."
        })),
        GenerationStatus::Done => {
            let Some(image) = generation.image.filter(|i| i.download_url.is_some()) else {
                bail!("the image was drawn, but it is in the trash or deleted now");
            };
            let link = effects.link(&image.file_name, image.download_url.as_deref(), &image.mime_type);
            Ok(json!({ "fileName": image.file_name, "link": link }))
        }
        GenerationStatus::Failed => bail!("the image was not drawn (failed): {}", json!(generation.error)),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunTemplate {
    /// The template's name, as the user kept it.
    pub template: String,
    /// The files it runs on.
    #[serde(flatten)]
    pub files: Selection,
}

/// Runs the user's template named `template` on the files chosen, waits for it (up to 3
/// minutes) and links what it made.
pub(super) async fn run_template(
    client: &Client,
    effects: &mut impl Effects,
    input: RunTemplate,
) -> Result<Value> {
    let wanted = required(&input.template, "template")?;
    let kept = client.templates().await?.templates;
    let Some(template) = kept.iter().find(|t| t.name.eq_ignore_ascii_case(&wanted)) else {
        let names: Vec<&str> = kept.iter().map(|t| t.name.as_str()).collect();
        bail!("no template is named {wanted:?}; the user's templates: {names:?}");
    };
    let (ids, _) = input.files.chosen(client).await?;
    let job = NewJob {
        job_type: None,
        template_id: Some(template.id),
        ..NewJob::new("", ids)
    };
    let created = client.create_job(&job).await?;
    let job = done(client, created.queued()?.id, PATIENCE).await?;
    let mut made = Vec::new();
    for file in &job.files {
        made.push(link_to(client, effects, file.id).await?);
    }
    Ok(serde_json::to_value(TemplateRun {
        template: template.name.clone(),
        job_id: job.id,
        made,
    })?)
}

/// What `run_template` answers.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateRun {
    /// The template's name.
    pub template: String,
    pub job_id: uuid::Uuid,
    /// Each file it made: its name and its link.
    pub made: Vec<Value>,
}
