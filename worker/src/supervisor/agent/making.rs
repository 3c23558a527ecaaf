//! The agent's tools that make something: a file request (a link anyone can send files to), a
//! review (a link to watch a video or track and leave notes), an image drawn from a prompt, and
//! a job run on files (any job a caller may start; zips have `zip_files`). Like the others they
//! call the drive's routes as the task's token, and attach what they made to the reply as links.

use chrono::{TimeDelta, Utc};
use drive_client::Client;
use drive_client::generations::{GenerationStatus, NewImage};
use drive_client::jobs::NewJob;
use drive_client::requests::NewRequest;
use drive_core::file::FileKind;
use drive_core::job::{JobSpec, JobType, SettingsError};
use serde_json::{Value, json};

use super::tools::{Links, ended, search, selected};

/// The longest an image or the jobs of one call are waited for; past it the model is told the
/// ids, to wait for with `wait_for`.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(180);

/// The most jobs one `run_job` starts (one a file, for types that take one file).
const MAX_JOBS: usize = 10;

pub fn definitions() -> [Value; 4] {
    let jobs: Vec<&str> = JobType::ALL
        .iter()
        .filter(|t| t.started_elsewhere().is_none() && **t != JobType::Zip)
        .map(|t| t.as_str())
        .collect();
    [
        json!({ "type": "function", "function": {
            "name": "ask_for_files",
            "description": "Makes a file request: a link anyone can send files to, without an account; what they send lands in a folder. Attaches the link to your reply.",
            "parameters": { "type": "object", "properties": {
                "title": { "type": "string", "description": "What is asked for, like Slides for the offsite." },
                "message": { "type": "string", "description": "Shown to whoever opens the link." },
                "folder": { "type": "string", "description": "Where the files land, like /inbox/slides (default a new folder named for the title)." },
                "days": { "type": "integer", "minimum": 1, "maximum": 365, "description": "Stop taking files after this many days (default never)." }
            }, "required": ["title"] }
        } }),
        json!({ "type": "function", "function": {
            "name": "share_for_review",
            "description": "Makes a review of a video or track: a link where anyone can watch it and leave notes at its moments. The newest video or track whose name has these words. Attaches the link to your reply.",
            "parameters": { "type": "object", "properties": {
                "text": { "type": "string", "description": "Words in the file's name, like cut 3." },
                "folder": { "type": "string", "description": "A folder path like /edits." },
                "title": { "type": "string", "description": "The review's title (default the file's name)." }
            }, "required": ["text"] }
        } }),
        json!({ "type": "function", "function": {
            "name": "make_image",
            "description": "Draws an image from a description and saves it to the drive; waits for it (up to 3 minutes) and attaches a link to it to your reply.",
            "parameters": { "type": "object", "properties": {
                "prompt": { "type": "string", "description": "What to draw." },
                "aspectRatio": { "type": "string", "enum": ["1:1", "3:2", "2:3", "16:9", "9:16", "4:3", "3:4"] }
            }, "required": ["prompt"] }
        } }),
        json!({ "type": "function", "function": {
            "name": "run_job",
            "description": "Runs a job on files (of a folder, of some types, or with some words in their names): one job a file for jobs that take one file, else one job on them all. Waits for them (up to 3 minutes) and attaches links to what they made.",
            "parameters": { "type": "object", "properties": {
                "job": { "type": "string", "enum": jobs },
                "folder": { "type": "string" },
                "types": { "type": "array", "items": { "type": "string", "enum": ["Video", "Audio", "Image", "Pdf", "Text", "Archive", "Other"] } },
                "text": { "type": "string", "description": "Only files with these words in their names." },
                "options": { "type": "object", "description": "The job's settings, as /create-file-job takes them (leave out for the defaults)." }
            }, "required": ["job"] }
        } }),
    ]
}

fn required<'a>(arguments: &'a Value, field: &str) -> anyhow::Result<&'a str> {
    arguments[field]
        .as_str()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .ok_or_else(|| anyhow::anyhow!("{field} is required"))
}

pub async fn ask_for_files(client: &Client, links: &mut Links, arguments: &Value) -> anyhow::Result<Value> {
    let title = required(arguments, "title")?;
    let given = |field: &str| {
        arguments[field]
            .as_str()
            .filter(|v| !v.trim().is_empty())
            .map(str::to_string)
    };
    let request = NewRequest {
        title: title.to_string(),
        message: given("message"),
        folder: given("folder"),
        expire_time: arguments["days"]
            .as_i64()
            .map(|days| Utc::now() + TimeDelta::days(days.clamp(1, 365))),
        ..NewRequest::default()
    };
    let made = client.create_request(&request).await?;
    Ok(json!({
        "request": made.title, "folder": made.folder.path, "expires": made.expire_time,
        "link": links.page(&made.url, &format!("file request: {title}")),
    }))
}

pub async fn share_for_review(
    client: &Client,
    links: &mut Links,
    arguments: &Value,
) -> anyhow::Result<Value> {
    let text = required(arguments, "text")?;
    let chosen = json!({ "text": text, "folder": arguments["folder"], "types": ["Video", "Audio"] });
    let found = client.search(&search(&chosen, 1)).await?;
    let Some(file) = found.files.first() else {
        anyhow::bail!("no video or track's name has those words: look with list_files");
    };
    let made = client
        .create_review(file.id, required(arguments, "title").ok())
        .await?;
    Ok(json!({
        "review": made.title, "file": made.file.file_name,
        "link": links.page(&made.url, &format!("review: {}", made.title)),
    }))
}

pub async fn make_image(client: &Client, links: &mut Links, arguments: &Value) -> anyhow::Result<Value> {
    let prompt = required(arguments, "prompt")?;
    let asked = NewImage {
        prompt: prompt.to_string(),
        aspect_ratio: arguments["aspectRatio"].as_str().map(str::to_string),
        ..NewImage::default()
    };
    let started = client.generate_image(&asked).await?;
    let id = started.id;
    let generation = client
        .wait_for_generation(id, std::time::Duration::from_secs(2), PATIENCE)
        .await?;
    match generation.status {
        GenerationStatus::Working => Ok(json!({
            "id": id, "status": "working",
            "next": "Not drawn yet: wait_for image_finished with this id, or tell the user it is on its way."
        })),
        GenerationStatus::Done => {
            let Some(image) = generation.image.filter(|i| i.download_url.is_some()) else {
                anyhow::bail!("the image was drawn, but it is in the trash or deleted now");
            };
            Ok(json!({ "fileName": image.file_name, "link": links.keep_made(&image) }))
        }
        GenerationStatus::Failed => anyhow::bail!(
            "the image was not drawn (failed): {}",
            json!(generation.error)
        ),
    }
}

pub async fn run_job(client: &Client, links: &mut Links, arguments: &Value) -> anyhow::Result<Value> {
    let name = required(arguments, "job")?;
    let job_type = JobType::parse(name).ok_or_else(|| anyhow::anyhow!("there is no job {name}"))?;
    if job_type == JobType::Zip {
        anyhow::bail!("use zip_files for a zip");
    }
    let options = arguments["options"].clone();
    let spec = JobSpec::parse(job_type, options.clone()).map_err(|e| match e {
        SettingsError::Range(e) => anyhow::anyhow!("options: {}: {}", e.field, e.message),
        SettingsError::Shape(e) => anyhow::anyhow!("options: {}", e.inner()),
    })?;
    let files: Vec<(uuid::Uuid, String)> = selected(client, arguments)
        .await?
        .into_iter()
        .filter(|f| FileKind::parse(&f.kind).is_some_and(|kind| spec.takes(kind, &f.file_name)))
        .map(|f| (f.id, f.file_name))
        .collect();
    if files.is_empty() {
        anyhow::bail!("no file there is one {name} takes ({})", spec.takes_what());
    }
    let (fewest, most) = spec.input_count();
    let groups: Vec<Vec<(uuid::Uuid, String)>> = if most == 1 {
        files.into_iter().take(MAX_JOBS).map(|f| vec![f]).collect()
    } else {
        vec![files.into_iter().take(most).collect()]
    };
    if groups[0].len() < fewest {
        anyhow::bail!(
            "{name} takes at least {fewest} files; only {} match",
            groups[0].len()
        );
    }
    let mut started = Vec::new();
    for group in &groups {
        let job = NewJob {
            options: options.clone(),
            ..NewJob::new(name, group.iter().map(|(id, _)| *id).collect())
        };
        started.push(client.create_job(&job).await?.queued()?.id);
    }
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut outcomes = Vec::new();
    for (group, id) in groups.iter().zip(&started) {
        let inputs: Vec<&str> = group.iter().map(|(_, name)| name.as_str()).collect();
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        outcomes.push(match ended(client, *id, left).await {
            Ok(job) => {
                let mut made = Vec::new();
                for file in job.files.iter().take(MAX_JOBS) {
                    let link = client.download_link(file.id).await?;
                    links.keep(&link);
                    made.push(file.file_name.clone());
                }
                json!({ "inputs": inputs, "state": "done", "made": made })
            }
            Err(why) => json!({ "inputs": inputs, "job": id, "state": format!("{why:#}") }),
        });
    }
    Ok(json!({ "jobs": outcomes, "links": "what the jobs made is attached to your reply" }))
}
