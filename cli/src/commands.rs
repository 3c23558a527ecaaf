//! Every command but `upload`: signing in, and the library (list, link, trash, restore,
//! delete, public, private, usage).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use anyhow::{Result, anyhow, bail};
use serde_json::json;
use uuid::Uuid;

use crate::client::{self, Client};
use crate::config::{self, Config};
use crate::output::{self, Align};
use crate::records::{FileRecord, FileRef, StorageUsage};

/// Most files `/trash-files` and `/delete-files` take in one call.
const FILES_PER_CALL: usize = 100;

/// Exchanges the token (so a wrong one is refused now rather than at the next command),
/// makes one call to check the application id, then saves the config.
pub async fn login(
    config_path: &Path,
    api_token: String,
    url: &str,
    app_id: String,
    json: bool,
) -> Result<()> {
    let base_url = url.trim_end_matches('/').to_string();
    let session = client::exchange(&client::http_client()?, &base_url, &api_token).await?;
    let user_id = session.user_id;
    let config = Config {
        base_url,
        app_id,
        api_token,
        session: Some(session),
        events_cursor: None,
    };
    let client = Client::new(config_path.to_path_buf(), config.clone())?;
    let _: StorageUsage = client.post_empty("/get-user-storage-usage").await?;
    config::save(config_path, &config)?;
    if json {
        output::print_json(&json!({
            "baseUrl": config.base_url,
            "appId": config.app_id,
            "userId": user_id,
            "config": config_path,
        }))
    } else {
        println!(
            "Signed in to {} as user {user_id}; saved {}",
            config.base_url,
            config_path.display()
        );
        Ok(())
    }
}

/// The library, newest first, as the service answers it.
pub async fn list(client: &Client, json: bool) -> Result<()> {
    let files: Vec<FileRecord> = client.post_empty("/select-user-files").await?;
    if json {
        return output::print_json(&files);
    }
    if files.is_empty() {
        println!("No files yet: `drive upload PATH` adds some.");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            vec![
                f.id.to_string(),
                output::size(f.file_size),
                f.kind.clone(),
                access(f.is_public).to_string(),
                output::time(f.insert_time),
                f.file_name.clone(),
            ]
        })
        .collect();
    output::print_table(
        &[
            ("ID", Align::Left),
            ("SIZE", Align::Right),
            ("TYPE", Align::Left),
            ("ACCESS", Align::Left),
            ("UPLOADED", Align::Left),
            ("NAME", Align::Left),
        ],
        &rows,
    );
    Ok(())
}

/// A fresh link: the permanent one of a public file, or one that works for 6 hours.
pub async fn link(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let file: FileRecord = client.post("/generate-download-url", &FileRef { id }).await?;
    if json {
        return output::print_json(&file);
    }
    let url = file
        .download_url
        .ok_or_else(|| anyhow!("/generate-download-url answered no link for {id}"))?;
    println!("{url}");
    Ok(())
}

/// The three routes that take an array of file references and answer the ids they acted on.
#[derive(Debug, Clone, Copy)]
pub enum Batch {
    Trash,
    Restore,
    Delete,
}

impl Batch {
    fn route(self) -> &'static str {
        match self {
            Batch::Trash => "/trash-files",
            Batch::Restore => "/restore-files",
            Batch::Delete => "/delete-files",
        }
    }

    /// The answer's field, and the word for what was done.
    fn done(self) -> &'static str {
        match self {
            Batch::Trash => "trashed",
            Batch::Restore => "restored",
            Batch::Delete => "deleted",
        }
    }

    /// Why the service may pass over an id.
    fn skipped_because(self) -> &'static str {
        match self {
            Batch::Trash => "not in your library (already in the trash?)",
            Batch::Restore => "not in your trash",
            Batch::Delete => "not one of your files",
        }
    }
}

pub async fn batch(client: &Client, batch: Batch, ids: &[Uuid], json: bool) -> Result<()> {
    let mut seen = HashSet::new();
    let ids: Vec<Uuid> = ids.iter().copied().filter(|id| seen.insert(*id)).collect();
    let mut acted_on = HashSet::new();
    for chunk in ids.chunks(FILES_PER_CALL) {
        let refs: Vec<FileRef> = chunk.iter().map(|&id| FileRef { id }).collect();
        let mut answer: BTreeMap<String, Vec<Uuid>> = client.post(batch.route(), &refs).await?;
        acted_on.extend(answer.remove(batch.done()).unwrap_or_default());
    }
    // Reported in the order given, which the service's answer need not keep.
    let (done, skipped): (Vec<Uuid>, Vec<Uuid>) = ids.iter().partition(|id| acted_on.contains(id));
    if json {
        output::print_json(&json!({ batch.done(): done, "notFound": skipped }))?;
    } else {
        for id in &done {
            println!("{} {id}", batch.done());
        }
    }
    if !skipped.is_empty() {
        let skipped: Vec<String> = skipped.iter().map(Uuid::to_string).collect();
        bail!("{}: {}", batch.skipped_because(), skipped.join(", "));
    }
    Ok(())
}

/// Makes a file public or private. The service's route toggles, so it is called only when the
/// file is not already as wanted; otherwise running the command twice would undo it.
pub async fn set_access(client: &Client, id: Uuid, public: bool, json: bool) -> Result<()> {
    let library: Vec<FileRecord> = client.post_empty("/select-user-files").await?;
    let file = library.into_iter().find(|f| f.id == id).ok_or_else(|| {
        anyhow!("no file in your library has id {id} (a trashed file must be restored first)")
    })?;
    let changed = file.is_public != public;
    let file: FileRecord = if changed {
        client.post("/toggle-file-access", &FileRef { id }).await?
    } else {
        file
    };
    if json {
        return output::print_json(&json!({ "changed": changed, "file": file }));
    }
    let state = if changed { "is now" } else { "was already" };
    match file.download_url.as_deref().filter(|_| file.is_public) {
        Some(url) => println!("{} {state} public: {url}", file.file_name),
        None => println!("{} {state} {}", file.file_name, access(file.is_public)),
    }
    Ok(())
}

pub async fn usage(client: &Client, json: bool) -> Result<()> {
    let usage: StorageUsage = client.post_empty("/get-user-storage-usage").await?;
    if json {
        return output::print_json(&usage);
    }
    println!("Plan       {}", usage.plan.as_deref().unwrap_or("none"));
    println!(
        "Used       {} of {} ({} objects)",
        output::size(usage.used_bytes),
        output::size(usage.limit_bytes),
        usage.objects
    );
    println!("Remaining  {}", output::size(usage.remaining_bytes));
    if let Some(public) = usage.buckets.get("public").filter(|t| t.objects > 0) {
        println!(
            "Public     {} ({} objects)",
            output::size(public.bytes),
            public.objects
        );
    }
    let rows: Vec<Vec<String>> = usage
        .kinds
        .iter()
        .filter(|(_, tally)| tally.objects > 0)
        .map(|(kind, tally)| vec![kind.clone(), tally.objects.to_string(), output::size(tally.bytes)])
        .collect();
    if !rows.is_empty() {
        println!();
        output::print_table(
            &[
                ("TYPE", Align::Left),
                ("FILES", Align::Right),
                ("SIZE", Align::Right),
            ],
            &rows,
        );
    }
    Ok(())
}

fn access(is_public: bool) -> &'static str {
    if is_public { "public" } else { "private" }
}
