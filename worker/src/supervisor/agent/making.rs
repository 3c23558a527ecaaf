//! The agent's `run_job`: a job run on files (any job a caller may start; zips have
//! `zip_files`), checked against the job's settings and inputs here, where the drive's job
//! vocabulary is; the files are chosen and the jobs started, waited for and linked through the
//! client library like the catalogue's tools.

use drive_client::Client;
use drive_client::jobs::NewJob;
use drive_client::tools::{self, Effects, Selection};
use drive_core::file::FileKind;
use drive_core::job::{JobSpec, JobType, SettingsError};
use serde_json::{Map, Value, json};
use uuid::Uuid;

/// The longest the jobs of one call are waited for; past it the model is told the ids, to
/// wait for with `wait_for`.
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(180);

/// The most jobs one `run_job` starts (one a file, for types that take one file).
const MAX_JOBS: usize = 10;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct RunJob {
    /// The job.
    job: String,
    #[serde(flatten)]
    selection: Selection,
    /// The job's settings, as /create-file-job takes them (leave out for the defaults).
    options: Option<Map<String, Value>>,
}

/// What the model is told of `run_job`: the jobs it may name among them.
pub fn definition() -> Value {
    let jobs: Vec<&str> = JobType::ALL
        .iter()
        .filter(|t| t.started_elsewhere().is_none() && **t != JobType::Zip)
        .map(|t| t.as_str())
        .collect();
    let mut definition = tools::function::<RunJob>(
        "run_job",
        "Runs a job on files (of a folder, of some types, or with some words in their names): one job a file for jobs that take one file, else one job on them all. Waits for them (up to 3 minutes) and attaches links to what they made.",
    );
    definition["function"]["parameters"]["properties"]["job"]["enum"] = json!(jobs);
    definition
}

pub async fn run_job(
    client: &Client,
    effects: &mut impl Effects,
    arguments: &Value,
) -> anyhow::Result<Value> {
    let asked: RunJob = serde_json::from_value(arguments.clone())
        .map_err(|e| anyhow::anyhow!("the arguments do not fit the tool: {e}"))?;
    let name = asked.job.trim();
    if name.is_empty() {
        anyhow::bail!("job is required");
    }
    let job_type = JobType::parse(name).ok_or_else(|| anyhow::anyhow!("there is no job {name}"))?;
    if job_type == JobType::Zip {
        anyhow::bail!("use zip_files for a zip");
    }
    let options = asked.options.map_or(Value::Null, Value::Object);
    let spec = JobSpec::parse(job_type, options.clone()).map_err(|e| match e {
        SettingsError::Range(e) => anyhow::anyhow!("options: {}: {}", e.field, e.message),
        SettingsError::Shape { at, error } => anyhow::anyhow!("{at}: {}", error.inner()),
    })?;
    let files: Vec<(Uuid, String)> = asked
        .selection
        .files(client)
        .await?
        .into_iter()
        .filter(|f| FileKind::parse(&f.kind).is_some_and(|kind| spec.takes(kind, &f.file_name)))
        .map(|f| (f.id, f.file_name))
        .collect();
    if files.is_empty() {
        anyhow::bail!("no file there is one {name} takes ({})", spec.takes_what());
    }
    let (fewest, most) = spec.input_count();
    let groups: Vec<Vec<(Uuid, String)>> = if most == 1 {
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
        outcomes.push(match tools::done(client, *id, left).await {
            Ok(job) => {
                let mut made = Vec::new();
                for file in job.files.iter().take(MAX_JOBS) {
                    let link = client.download_link(file.id).await?;
                    effects.file(&link);
                    made.push(file.file_name.clone());
                }
                json!({ "inputs": inputs, "state": "done", "made": made })
            }
            Err(why) => json!({ "inputs": inputs, "job": id, "state": format!("{why:#}") }),
        });
    }
    Ok(json!({ "jobs": outcomes, "links": "what the jobs made is attached to your reply" }))
}
