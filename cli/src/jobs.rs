//! `drive jobs`: file jobs from the command line. `create` takes the settings as `--set
//! name=value` flags or as `--options JSON` (or a pipeline's steps as `--steps FILE.json`),
//! `--dry-run` only estimates, and `--wait` follows the job to its end with a progress bar fed
//! by the job's own progress (each poll holds on the service for up to a second, so the end is
//! seen at once); `list`, `cancel` and `retry`.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use chrono::SecondsFormat;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::output;
use drive_client::Client;
use drive_client::jobs::{Job, JobQuery, JobState, JobWait, NewJob};

pub struct Asked<'a> {
    /// The type; with `steps`, the first file.
    pub job_type: &'a str,
    pub files: &'a [Uuid],
    pub steps: Option<&'a std::path::Path>,
    pub template: Option<Uuid>,
    pub idempotency_key: Option<&'a str>,
    pub notify_url: Option<&'a str>,
    pub client_metadata: Option<&'a str>,
    pub options: Option<&'a str>,
    pub settings: &'a [String],
    pub folder: Option<&'a str>,
    pub dry_run: bool,
}

/// A job's settings: `--options` JSON, with each `--set name=value` over it (a value that
/// reads as JSON — a number, true, false, an array — is taken as such, any other as a string).
pub fn options(given: Option<&str>, settings: &[String]) -> Result<Value> {
    let mut options = match given {
        Some(text) => match serde_json::from_str(text).context("--options is not JSON")? {
            Value::Object(map) => map,
            _ => bail!("--options must be a JSON object, like '{{\"height\": 720}}'"),
        },
        None => Map::new(),
    };
    for setting in settings {
        let Some((name, value)) = setting.split_once('=') else {
            bail!("--set takes name=value, not {setting:?}");
        };
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        options.insert(name.to_string(), value);
    }
    Ok(Value::Object(options))
}

/// A pipeline's steps from `path`: a JSON list of steps, or an object holding one as `steps`.
pub fn steps(path: &std::path::Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    match value {
        Value::Array(_) => Ok(value),
        Value::Object(mut map) if map.get("steps").is_some_and(Value::is_array) => {
            Ok(map.remove("steps").unwrap_or_default())
        }
        _ => bail!(
            "{} holds neither a list of steps nor {{ \"steps\": [...] }}",
            path.display()
        ),
    }
}

/// `--client-metadata`, read as JSON.
fn metadata(asked: &Asked<'_>) -> Result<Option<Value>> {
    asked
        .client_metadata
        .map(|text| serde_json::from_str(text).context("--client-metadata is not JSON"))
        .transpose()
}

pub async fn create(client: &Client, asked: &Asked<'_>, wait: bool, json: bool) -> Result<()> {
    let new = match (asked.steps, asked.template) {
        (None, None) => NewJob {
            job_type: Some(asked.job_type.to_string()),
            steps: None,
            template_id: None,
            file_ids: asked.files.to_vec(),
            options: options(asked.options, asked.settings)?,
            dry_run: asked.dry_run,
            folder: asked.folder.map(str::to_string),
            idempotency_key: asked.idempotency_key.map(str::to_string),
            notify_url: asked.notify_url.map(str::to_string),
            client_metadata: metadata(asked)?,
        },
        (path, template) => {
            let first: Uuid = asked.job_type.parse().with_context(|| {
                format!(
                    "with --steps or --template every argument is a file id, not {:?}",
                    asked.job_type
                )
            })?;
            NewJob {
                job_type: None,
                steps: path.map(steps).transpose()?,
                template_id: template,
                file_ids: [first].into_iter().chain(asked.files.iter().copied()).collect(),
                options: Value::Null,
                dry_run: asked.dry_run,
                folder: asked.folder.map(str::to_string),
                idempotency_key: asked.idempotency_key.map(str::to_string),
                notify_url: asked.notify_url.map(str::to_string),
                client_metadata: metadata(asked)?,
            }
        }
    };
    let created = client.create_job(&new).await?;
    if asked.dry_run {
        if json {
            return output::print_json(&created);
        }
        println!("would take about {} s once it starts", created.estimate_seconds);
        return Ok(());
    }
    let job = created.queued()?;
    if let Some(secret) = created.notify_secret.as_deref().filter(|_| !json) {
        println!("notices signed with {secret} (check X-Drive-Signature with it)");
    }
    if !wait {
        if json {
            return output::print_json(&created);
        }
        println!(
            "job {} {} (about {} s once it starts)",
            job.id,
            job.state.as_str(),
            created.estimate_seconds
        );
        return Ok(());
    }
    let ended = follow(client, job.id, !json).await?;
    show_end(&ended, json)
}

/// Follows the job to its end, moving a progress bar when `visible`.
async fn follow(client: &Client, id: Uuid, visible: bool) -> Result<Job> {
    let bar = ProgressBar::with_draw_target(
        Some(1000),
        if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(ProgressStyle::with_template(
        "{msg} [{bar:30}] {percent:>3}% {elapsed}",
    )?);
    // A poll holds up to a second on the service: the bar moves each second and the end
    // shows as it happens.
    let wait = JobWait {
        hold: Duration::from_secs(1),
        patience: None,
    };
    let ended = client
        .wait_for_job(id, wait, |job| {
            bar.set_message(format!("{} {}", job.job_type, job.state.as_str()));
            bar.set_position((job.progress * 1000.0) as u64);
        })
        .await?;
    bar.finish_and_clear();
    Ok(ended)
}

/// `drive templates create`: the steps in `path` kept as `name`.
pub async fn create_template(client: &Client, name: &str, path: &std::path::Path, json: bool) -> Result<()> {
    let made = client.create_template(name, &steps(path)?).await?;
    if json {
        return output::print_json(&made);
    }
    println!("template {} {}", made.template.id, made.template.name);
    Ok(())
}

/// `drive templates list`.
pub async fn templates(client: &Client, json: bool) -> Result<()> {
    let kept = client.templates().await?;
    if json {
        return output::print_json(&kept);
    }
    if kept.templates.is_empty() {
        println!("No templates: `drive templates create NAME --steps FILE.json` makes one.");
    }
    for template in &kept.templates {
        let steps: Vec<&str> = template
            .steps
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|step| step["name"].as_str())
            .collect();
        println!("{}  {}  {}", template.id, template.name, steps.join(" → "));
    }
    Ok(())
}

/// `drive templates remove`.
pub async fn remove_template(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let removed = client.delete_template(id).await?;
    if json {
        return output::print_json(&removed);
    }
    println!("template {} removed", removed.deleted);
    Ok(())
}

/// `drive jobs retry`: the job queued again; with `wait`, followed to its end.
pub async fn retry(client: &Client, id: Uuid, wait: bool, json: bool) -> Result<()> {
    let retried = client.retry_job(id).await?;
    if !wait {
        if json {
            return output::print_json(&retried);
        }
        println!("job {} {} again", retried.job.id, retried.job.state.as_str());
        return Ok(());
    }
    let ended = follow(client, id, !json).await?;
    show_end(&ended, json)
}

fn show_end(job: &Job, json: bool) -> Result<()> {
    if json {
        output::print_json(job)?;
    } else {
        println!("job {} {} {}", job.id, job.job_type, job.state.as_str());
        // A pipeline's steps, each with its state and runs.
        for step in job
            .rest
            .get("steps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            println!(
                "  step {} ({}) {} {}/{} runs",
                step["name"].as_str().unwrap_or_default(),
                step["jobType"].as_str().unwrap_or_default(),
                step["state"].as_str().unwrap_or_default(),
                step["runsDone"],
                step["runs"]
            );
        }
        for file in &job.files {
            println!("  {}  {}  {} bytes", file.id, file.file_name, file.file_size);
        }
    }
    match job.state {
        JobState::Failed => bail!(
            "the job failed: {}",
            job.error.as_deref().unwrap_or("no reason given")
        ),
        _ => Ok(()),
    }
}

pub async fn list(client: &Client, limit: Option<u32>, json: bool) -> Result<()> {
    let query = JobQuery {
        limit,
        ..JobQuery::default()
    };
    let page = client.jobs(&query).await?;
    if json {
        return output::print_json(&page);
    }
    for job in &page.jobs {
        println!(
            "{}  {:<14} {:<8} {:>3.0}%  {}  {} file(s) made",
            job.id,
            job.job_type,
            job.state.as_str(),
            job.progress * 100.0,
            job.create_time.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            job.files.len(),
        );
    }
    println!(
        "job minutes this month: {:.1} of {:.0}",
        page.minutes.used, page.minutes.limit
    );
    Ok(())
}

pub async fn cancel(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let answer = client.cancel_job(id).await?;
    if json {
        return output::print_json(&answer);
    }
    let job = &answer.job;
    println!(
        "job {} {}{}",
        job.id,
        job.state.as_str(),
        if job.stop_requested && job.state == JobState::Running {
            " (stopping)"
        } else {
            ""
        }
    );
    Ok(())
}
