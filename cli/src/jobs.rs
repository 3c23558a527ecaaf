//! `drive jobs`: file jobs from the command line. `create` takes the settings as `--set
//! name=value` flags or as `--options JSON`, `--dry-run` only estimates, and `--wait` follows
//! the job to its end with a progress bar fed by the job's own progress (each poll holds on the
//! service for up to a second, so the end is seen at once); `list` and `cancel`.

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value, json};

use crate::output;
use drive_client::Client;

pub struct NewJob<'a> {
    pub job_type: &'a str,
    pub files: &'a [String],
    pub options: Option<&'a str>,
    pub settings: &'a [String],
    pub folder: Option<&'a str>,
    pub dry_run: bool,
}

/// The job's settings: `--options` JSON, with each `--set name=value` over it (a value that
/// reads as JSON — a number, true, false, an array — is taken as such, any other as a string).
fn options(new: &NewJob<'_>) -> Result<Value> {
    let mut options = match new.options {
        Some(text) => match serde_json::from_str(text).context("--options is not JSON")? {
            Value::Object(map) => map,
            _ => bail!("--options must be a JSON object, like '{{\"height\": 720}}'"),
        },
        None => Map::new(),
    };
    for setting in new.settings {
        let Some((name, value)) = setting.split_once('=') else {
            bail!("--set takes name=value, not {setting:?}");
        };
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()));
        options.insert(name.to_string(), value);
    }
    Ok(Value::Object(options))
}

pub async fn create(client: &Client, new: &NewJob<'_>, wait: bool, json: bool) -> Result<()> {
    let body = json!({
        "jobType": new.job_type,
        "fileIds": new.files,
        "options": options(new)?,
        "dryRun": new.dry_run,
        "folder": new.folder,
    });
    let created: Value = client.post("/create-file-job", &body).await?;
    if new.dry_run {
        if json {
            return output::print_json(&created);
        }
        println!("would take about {} s once it starts", created["estimateSeconds"]);
        return Ok(());
    }
    let job = &created["job"];
    let id = job["id"].as_str().unwrap_or_default().to_string();
    if !wait {
        if json {
            return output::print_json(&created);
        }
        println!(
            "job {id} {} (about {} s once it starts)",
            job["state"].as_str().unwrap_or("?"),
            created["estimateSeconds"]
        );
        return Ok(());
    }
    let ended = follow(client, &id, !json).await?;
    show_end(&ended, json)
}

/// Polls the job until it ends, moving a progress bar when `visible`.
async fn follow(client: &Client, id: &str, visible: bool) -> Result<Value> {
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
    loop {
        // A poll holds up to a second on the service: the bar moves each second and the
        // end shows as it happens.
        let page: Value = client
            .post("/select-file-jobs", &json!({ "ids": [id], "wait": 1 }))
            .await?;
        let Some(job) = page["jobs"].get(0) else {
            bail!("no job of yours has the id {id}");
        };
        let state = job["state"].as_str().unwrap_or("?");
        bar.set_message(format!("{} {state}", job["jobType"].as_str().unwrap_or("job")));
        bar.set_position((job["progress"].as_f64().unwrap_or(0.0) * 1000.0) as u64);
        if matches!(state, "done" | "failed" | "stopped") {
            bar.finish_and_clear();
            return Ok(job.clone());
        }
    }
}

fn show_end(job: &Value, json: bool) -> Result<()> {
    if json {
        output::print_json(job)?;
    } else {
        println!(
            "job {} {} {}",
            job["id"].as_str().unwrap_or("?"),
            job["jobType"].as_str().unwrap_or("?"),
            job["state"].as_str().unwrap_or("?")
        );
        for file in job["files"].as_array().into_iter().flatten() {
            println!(
                "  {}  {}  {} bytes",
                file["id"].as_str().unwrap_or("?"),
                file["fileName"].as_str().unwrap_or("?"),
                file["fileSize"]
            );
        }
    }
    match job["state"].as_str() {
        Some("failed") => bail!(
            "the job failed: {}",
            job["error"].as_str().unwrap_or("no reason given")
        ),
        _ => Ok(()),
    }
}

pub async fn list(client: &Client, limit: Option<u32>, json: bool) -> Result<()> {
    let page: Value = client
        .post("/select-file-jobs", &json!({ "limit": limit }))
        .await?;
    if json {
        return output::print_json(&page);
    }
    for job in page["jobs"].as_array().into_iter().flatten() {
        println!(
            "{}  {:<14} {:<8} {:>3.0}%  {}  {} file(s) made",
            job["id"].as_str().unwrap_or("?"),
            job["jobType"].as_str().unwrap_or("?"),
            job["state"].as_str().unwrap_or("?"),
            job["progress"].as_f64().unwrap_or(0.0) * 100.0,
            job["createTime"].as_str().unwrap_or("?"),
            job["files"].as_array().map_or(0, Vec::len),
        );
    }
    let minutes = &page["minutes"];
    println!(
        "job minutes this month: {:.1} of {:.0}",
        minutes["used"].as_f64().unwrap_or(0.0),
        minutes["limit"].as_f64().unwrap_or(0.0)
    );
    Ok(())
}

pub async fn cancel(client: &Client, id: &str, json: bool) -> Result<()> {
    let answer: Value = client.post("/cancel-file-job", &json!({ "id": id })).await?;
    if json {
        return output::print_json(&answer);
    }
    let job = &answer["job"];
    println!(
        "job {} {}{}",
        job["id"].as_str().unwrap_or("?"),
        job["state"].as_str().unwrap_or("?"),
        if job["stopRequested"] == true && job["state"] == "running" {
            " (stopping)"
        } else {
            ""
        }
    );
    Ok(())
}
