//! Every command but `upload`: signing in, and the library (list, link, trash, restore,
//! delete, public, private, usage).

use std::io::{ErrorKind, Write};
use std::path::Path;

use anyhow::{Result, anyhow, bail};
use drive_client::config::{self, Config};
use drive_client::files::Batch;
use drive_client::records::FileRecord;
use drive_client::search::SearchQuery;
use drive_client::{self as client, Client};
use futures::TryStreamExt;
use serde_json::json;
use uuid::Uuid;

use crate::output::{self, Align, Table};

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
    client.storage_usage().await?;
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

/// The library, newest first, printed a page of `/search-files` at a time as the pages come:
/// never asked for or held whole, so the first rows of a library of any size show at once. A
/// reader that stops reading (`drive list | head`) ends it quietly.
pub async fn list(client: &Client, json: bool) -> Result<()> {
    match write_list(client, json, &mut std::io::stdout().lock()).await {
        Err(e)
            if e.downcast_ref::<std::io::Error>().map(std::io::Error::kind)
                == Some(ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        done => done,
    }
}

async fn write_list(client: &Client, json: bool, out: &mut impl Write) -> Result<()> {
    let query = SearchQuery {
        sort: Some("newest".to_string()),
        limit: Some(LIST_PAGE as u32),
        ..SearchQuery::default()
    };
    let pages = client
        .found_files(query)
        .map_ok(FileRecord::from)
        .try_chunks(LIST_PAGE)
        .map_err(|e| e.1);
    let mut pages = std::pin::pin!(pages);
    let mut listed = 0;
    let mut table = None;
    while let Some(page) = pages.try_next().await? {
        if json {
            // One JSON array, written an element at a time.
            for file in &page {
                let sep = if listed == 0 { "[\n" } else { ",\n" };
                write!(out, "{sep}{}", serde_json::to_string_pretty(file)?)?;
                listed += 1;
            }
            continue;
        }
        let rows: Vec<Vec<String>> = page.iter().map(list_row).collect();
        let table = table.get_or_insert_with(|| Table::new(&LIST_COLUMNS, &rows));
        if listed == 0 {
            writeln!(out, "{}", table.header())?;
        }
        for row in &rows {
            writeln!(out, "{}", table.line(row))?;
        }
        out.flush()?;
        listed += page.len();
    }
    match (json, listed) {
        (true, 0) => writeln!(out, "[]")?,
        (true, _) => writeln!(out, "\n]")?,
        (false, 0) => writeln!(out, "No files yet: `drive upload PATH` adds some.")?,
        (false, _) => {}
    }
    Ok(())
}

/// Files a page of `drive list`: the most `/search-files` answers at once.
const LIST_PAGE: usize = 200;

const LIST_COLUMNS: [(&str, Align); 6] = [
    ("ID", Align::Left),
    ("SIZE", Align::Right),
    ("TYPE", Align::Left),
    ("ACCESS", Align::Left),
    ("UPLOADED", Align::Left),
    ("NAME", Align::Left),
];

fn list_row(f: &FileRecord) -> Vec<String> {
    vec![
        f.id.to_string(),
        output::size(f.file_size),
        f.kind.clone(),
        access(f.is_public).to_string(),
        output::time(f.insert_time),
        f.file_name.clone(),
    ]
}

/// A fresh link: the permanent one of a public file, or one that works for 6 hours.
pub async fn link(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let file = client.download_link(id).await?;
    if json {
        return output::print_json(&file);
    }
    let url = file
        .download_url
        .ok_or_else(|| anyhow!("/generate-download-url answered no link for {id}"))?;
    println!("{url}");
    Ok(())
}

/// Why the service may pass over an id.
fn skipped_because(batch: Batch) -> &'static str {
    match batch {
        Batch::Trash => "not in your library (already in the trash?)",
        Batch::Restore => "not in your trash",
        Batch::Delete => "not one of your files",
    }
}

pub async fn batch(client: &Client, batch: Batch, ids: &[Uuid], json: bool) -> Result<()> {
    let outcome = client.batch(batch, ids).await?;
    if json {
        output::print_json(&json!({ batch.done(): outcome.done, "notFound": outcome.skipped }))?;
    } else {
        for id in &outcome.done {
            println!("{} {id}", batch.done());
        }
    }
    if !outcome.skipped.is_empty() {
        let skipped: Vec<String> = outcome.skipped.iter().map(Uuid::to_string).collect();
        bail!("{}: {}", skipped_because(batch), skipped.join(", "));
    }
    Ok(())
}

/// Makes a file public or private (without undoing it when run twice).
pub async fn set_access(client: &Client, id: Uuid, public: bool, json: bool) -> Result<()> {
    let (changed, file) = client.set_access(id, public).await?.ok_or_else(|| {
        anyhow!("no file in your library has id {id} (a trashed file must be restored first)")
    })?;
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
    let usage = client.storage_usage().await?;
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
    println!(
        "Images     {} of {} this month",
        usage.images.used, usage.images.limit
    );
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
