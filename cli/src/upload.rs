//! `drive upload PATH...`: files and folders, 20 files at a time, after checking that they
//! fit in the storage left, and never sending twice a file the drive already has.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use futures::{StreamExt, stream};
use serde::{Serialize, Serializer};
use uuid::Uuid;

use crate::client::Client;
use crate::local::{self, LocalFile};
use crate::output::{self, Align};
use crate::progress::{FileProgress, UploadProgress};
use crate::records::{FileRecord, StorageUsage};
use crate::transfer::{self, Sent};

const FILES_AT_ONCE: usize = 20;

/// What became of one file, as `--json` prints it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    path: String,
    file_name: String,
    file_size: u64,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Uuid>,
    /// Parts an interrupted run had already stored, which this run skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    resumed_parts: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Uploaded,
    /// Uploaded, picking up the parts an interrupted run had stored.
    Resumed,
    /// Not sent: an interrupted run had stored the whole file but not recorded it; this run
    /// recorded it.
    Recovered,
    /// Not sent: the drive has a file of the same name, size and modified time.
    AlreadyStored,
    /// Not sent: the drive has it, in the trash.
    InTrash,
    Failed,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Uploaded => "uploaded",
            Status::Resumed => "resumed",
            Status::Recovered => "recovered",
            Status::AlreadyStored => "already stored",
            Status::InTrash => "in trash",
            Status::Failed => "failed",
        }
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.label())
    }
}

/// Where a file ends up in the drive.
#[derive(Debug, Clone, Copy)]
struct Outcome {
    status: Status,
    id: Uuid,
    resumed_parts: Option<usize>,
}

impl Outcome {
    fn found(status: Status, id: Uuid) -> Outcome {
        Outcome {
            status,
            id,
            resumed_parts: None,
        }
    }
}

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
    let library: Vec<FileRecord> = client.post_empty("/select-user-files").await?;

    let mut first_with_key = HashMap::new();
    let plans: Vec<Plan> = files
        .iter()
        .enumerate()
        .map(|(index, file)| {
            if let Some(stored) = library.iter().find(|r| file.is_stored_as(r)) {
                return Plan::AlreadyStored(stored.id);
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
    check_room(client, to_send.iter().map(|&i| &files[i])).await?;

    let total_bytes = to_send.iter().map(|&i| files[i].size).sum();
    let visible = !json && std::io::stderr().is_terminal();
    let progress = UploadProgress::new(total_bytes, to_send.len(), visible)?;
    let sent: HashMap<usize, Result<Outcome, String>> = stream::iter(to_send)
        .map(|index| {
            let (file, progress) = (&files[index], &progress);
            async move {
                let bar = progress.start_file(&file.name, file.size);
                let outcome = upload_one(client, file, user_id, &bar).await;
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
                Plan::AlreadyStored(id) => Ok(Outcome::found(Status::AlreadyStored, *id)),
                Plan::Send => outcome_of(&sent, index),
                Plan::SameAs(first) => {
                    outcome_of(&sent, *first).map(|o| Outcome::found(Status::AlreadyStored, o.id))
                }
            };
            report(file, outcome)
        })
        .collect();
    print(&reports, json)
}

fn outcome_of(sent: &HashMap<usize, Result<Outcome, String>>, index: usize) -> Result<Outcome, String> {
    sent.get(&index)
        .cloned()
        .unwrap_or_else(|| Err("the upload did not run".to_string()))
}

/// Refuses before anything is sent when the files do not fit in the storage left.
async fn check_room<'a>(client: &Client, files: impl Iterator<Item = &'a LocalFile>) -> Result<()> {
    let (count, needed) = files.fold((0, 0), |(count, bytes), f| (count + 1, bytes + f.size));
    if count == 0 {
        return Ok(());
    }
    let usage: StorageUsage = client.post_empty("/get-user-storage-usage").await?;
    if needed > usage.remaining_bytes {
        bail!(
            "not enough storage: {count} files to upload need {}, but only {} of {} is left; nothing was uploaded",
            output::size(needed),
            output::size(usage.remaining_bytes),
            output::size(usage.limit_bytes),
        );
    }
    Ok(())
}

async fn upload_one(
    client: &Client,
    file: &LocalFile,
    user_id: Uuid,
    progress: &FileProgress,
) -> Result<Outcome> {
    match transfer::send(client, file, user_id, progress).await? {
        Sent::Recorded { id, resumed_parts } => Ok(Outcome {
            status: if resumed_parts.is_some() {
                Status::Resumed
            } else {
                Status::Uploaded
            },
            id,
            resumed_parts,
        }),
        Sent::Recovered { id } => recovered(client, id).await,
        Sent::KeyTaken => find_recorded(client, file).await,
    }
}

/// `/insert-file` answers the file already recorded under a key too, and the library listing
/// showed none: a recovered file is one of those only if it is in the trash. (One another run
/// recorded meanwhile is reported recovered.)
async fn recovered(client: &Client, id: Uuid) -> Result<Outcome> {
    let trash: Vec<FileRecord> = client.post_empty("/select-trashed-files").await?;
    let status = if trash.iter().any(|r| r.id == id) {
        Status::InTrash
    } else {
        Status::Recovered
    };
    Ok(Outcome::found(status, id))
}

/// The file recorded under this file's key, which the library listing did not show: recorded
/// since by another run, or in the trash.
async fn find_recorded(client: &Client, file: &LocalFile) -> Result<Outcome> {
    let library: Vec<FileRecord> = client.post_empty("/select-user-files").await?;
    if let Some(stored) = library.iter().find(|r| file.is_stored_as(r)) {
        return Ok(Outcome::found(Status::AlreadyStored, stored.id));
    }
    let trash: Vec<FileRecord> = client.post_empty("/select-trashed-files").await?;
    if let Some(trashed) = trash.iter().find(|r| file.is_stored_as(r)) {
        return Ok(Outcome::found(Status::InTrash, trashed.id));
    }
    Err(anyhow!(
        "the drive already records a file under this file's key, but neither the library nor the trash shows it"
    ))
}

fn report(file: &LocalFile, outcome: Result<Outcome, String>) -> Report {
    let (status, id, resumed_parts, error) = match outcome {
        Ok(o) => (o.status, Some(o.id), o.resumed_parts, None),
        Err(e) => (Status::Failed, None, None, Some(e)),
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
                    r.status.label().to_string(),
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
        if reports.iter().any(|r| r.status == Status::InTrash) {
            eprintln!("Files in the trash were not sent again: `drive restore ID` brings one back.");
        }
    }
    let failed: Vec<&Report> = reports.iter().filter(|r| r.status == Status::Failed).collect();
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
