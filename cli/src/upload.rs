//! `drive upload PATH...`: files and folders, 20 files at a time, after checking that they
//! fit in the storage left, and never sending twice a file the drive already has.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Result, bail};
use drive_client::Client;
use drive_client::local::{self, LocalFile};
use drive_client::upload::{self, UploadStatus, Uploaded};
use futures::{StreamExt, stream};
use serde::Serialize;
use uuid::Uuid;

use crate::output::{self, Align};
use crate::progress::UploadProgress;

const FILES_AT_ONCE: usize = 20;

/// What became of one file, as `--json` prints it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    path: String,
    file_name: String,
    file_size: u64,
    /// In words (`already stored`), or `failed`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Uuid>,
    /// Parts an interrupted run had already stored, which this run skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    resumed_parts: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// What became of one file: where it ended up, or why it did not.
type Outcome = Result<Uploaded, String>;

/// What to do with a file, decided before anything is sent.
enum Plan {
    AlreadyStored(Uuid),
    Send,
    /// Same name, size and modified time as the file at this index, sent in this run.
    SameAs(usize),
}

pub async fn run(client: &Client, paths: &[PathBuf], json: bool) -> Result<()> {
    let files = local::find_files(paths)?;
    if files.is_empty() {
        let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        bail!("nothing to upload: no files in {}", paths.join(", "));
    }
    let user_id = client.user_id().await?;
    // Each file looked up by its name and size, a few at once: the library is never listed.
    let stored: Vec<Option<Uuid>> = stream::iter(&files)
        .map(|file| async move { Ok(client.stored_copy(file).await?.map(|r| r.id)) })
        .buffered(FILES_AT_ONCE)
        .collect::<Vec<Result<_>>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;

    let mut first_with_key = HashMap::new();
    let plans: Vec<Plan> = files
        .iter()
        .zip(stored)
        .enumerate()
        .map(|(index, (file, stored))| {
            if let Some(id) = stored {
                return Plan::AlreadyStored(id);
            }
            match first_with_key.entry(file.object_key(user_id)) {
                Entry::Occupied(first) => Plan::SameAs(*first.get()),
                Entry::Vacant(slot) => {
                    slot.insert(index);
                    Plan::Send
                }
            }
        })
        .collect();
    let to_send: Vec<usize> = (0..files.len())
        .filter(|&i| matches!(plans[i], Plan::Send))
        .collect();
    let total_bytes = to_send.iter().map(|&i| files[i].size).sum();
    upload::check_room(client, to_send.len(), total_bytes).await?;

    let visible = !json && std::io::stderr().is_terminal();
    let progress = UploadProgress::new(total_bytes, to_send.len(), visible)?;
    let sent: HashMap<usize, Outcome> = stream::iter(to_send)
        .map(|index| {
            let (file, progress) = (&files[index], &progress);
            async move {
                let bar = progress.start_file(&file.name, file.size);
                let outcome = upload::send(client, file, user_id, &bar.counter()).await;
                bar.done();
                (index, outcome.map_err(|e| format!("{e:#}")))
            }
        })
        .buffer_unordered(FILES_AT_ONCE)
        .collect()
        .await;
    progress.finish();

    let reports: Vec<Report> = files
        .iter()
        .zip(&plans)
        .enumerate()
        .map(|(index, (file, plan))| {
            let outcome = match plan {
                Plan::AlreadyStored(id) => Ok(Uploaded::found(UploadStatus::AlreadyStored, *id)),
                Plan::Send => outcome_of(&sent, index),
                Plan::SameAs(first) => {
                    outcome_of(&sent, *first).map(|o| Uploaded::found(UploadStatus::AlreadyStored, o.id))
                }
            };
            report(file, outcome)
        })
        .collect();
    print(&reports, json)
}

fn outcome_of(sent: &HashMap<usize, Outcome>, index: usize) -> Outcome {
    sent.get(&index)
        .cloned()
        .unwrap_or_else(|| Err("the upload did not run".to_string()))
}

const FAILED: &str = "failed";

fn report(file: &LocalFile, outcome: Outcome) -> Report {
    let (status, id, resumed_parts, error) = match outcome {
        Ok(o) => (o.status.label(), Some(o.id), o.resumed_parts, None),
        Err(e) => (FAILED, None, None, Some(e)),
    };
    Report {
        path: file.path.display().to_string(),
        file_name: file.name.clone(),
        file_size: file.size,
        status,
        id,
        resumed_parts,
        error,
    }
}

fn print(reports: &[Report], json: bool) -> Result<()> {
    if json {
        output::print_json(&reports)?;
    } else {
        let rows: Vec<Vec<String>> = reports
            .iter()
            .map(|r| {
                vec![
                    r.status.to_string(),
                    output::size(r.file_size),
                    r.id.map_or("-".to_string(), |id| id.to_string()),
                    r.path.clone(),
                ]
            })
            .collect();
        output::print_table(
            &[
                ("STATUS", Align::Left),
                ("SIZE", Align::Right),
                ("ID", Align::Left),
                ("PATH", Align::Left),
            ],
            &rows,
        );
        if reports.iter().any(|r| r.status == UploadStatus::InTrash.label()) {
            eprintln!("Files in the trash were not sent again: `drive restore ID` brings one back.");
        }
    }
    let failed: Vec<&Report> = reports.iter().filter(|r| r.status == FAILED).collect();
    for report in &failed {
        eprintln!(
            "error: {}: {}",
            report.path,
            report.error.as_deref().unwrap_or("failed")
        );
    }
    if !failed.is_empty() {
        bail!("{} of {} files were not uploaded", failed.len(), reports.len());
    }
    Ok(())
}
