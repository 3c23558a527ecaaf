//! Reading files and searching inside them: `drive read ID` reads one (`/read-file`),
//! `drive read-for-search ID...` has files read (a readForSearch job), `drive captions ID...`
//! makes captions of what was read, `drive search --query TEXT` shows the moments found.

use std::path::Path;

use anyhow::{Context, Result, bail};
use base64::Engine;
use drive_client::jobs::NewJob;
use drive_client::reading::ReadQuery;
use drive_client::search::{Moment, SearchQuery};
use serde_json::json;
use uuid::Uuid;

use crate::output::{self, Align};
use drive_client::Client;

/// Submits a readForSearch job for `ids`; prints the job.
pub async fn read_for_search(client: &Client, ids: &[Uuid], json: bool) -> Result<()> {
    let job = NewJob::new("readForSearch", ids.to_vec());
    submit(
        client,
        &job,
        "to read; `drive search --query …` finds them once it is done",
        json,
    )
    .await
}

/// Submits a captions job for `ids`; prints the job.
pub async fn captions(client: &Client, ids: &[Uuid], format: &str, json: bool) -> Result<()> {
    let job = NewJob {
        options: json!({ "format": format }),
        ..NewJob::new("captions", ids.to_vec())
    };
    submit(
        client,
        &job,
        "to caption; the captions land beside each file",
        json,
    )
    .await
}

async fn submit(client: &Client, job: &NewJob, what: &str, json: bool) -> Result<()> {
    let answer = client.create_job(job).await?;
    if json {
        return output::print_json(&answer);
    }
    println!(
        "job {} queued: {} file(s) {what}",
        answer.queued()?.id,
        job.file_ids.len()
    );
    Ok(())
}

/// Reads a file: prints its note, text and what is said, and writes a picture or frame to
/// `out` (an answer holding a picture is an error without `out`).
pub async fn read(client: &Client, query: &ReadQuery, out: Option<&Path>, json: bool) -> Result<()> {
    let answer = client.read_file(query).await?;
    if let Some(image) = &answer.image {
        let Some(out) = out else {
            bail!(
                "{} is read as a picture: give --out FILE to write it",
                query.file_id
            );
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .context("the picture the drive sent is not base64")?;
        std::fs::write(out, bytes).with_context(|| format!("writing {}", out.display()))?;
    }
    if json {
        return output::print_json(&answer);
    }
    println!("{}", answer.note);
    if let Some(out) = out.filter(|_| answer.image.is_some()) {
        println!("picture written to {}", out.display());
    }
    if let Some(text) = &answer.text {
        println!("{text}");
    }
    for s in answer.said.iter().flatten() {
        println!("[{:.1}–{:.1} s] {}", s.at, s.until, s.text);
    }
    if let Some(next) = answer.next_offset {
        println!("next offset: {next}");
    }
    if let Some(next) = answer.next_at {
        println!("next at: {}", json!(next));
    }
    Ok(())
}

/// `/search-files` with `query`: with words to find inside files, the moments found, with the
/// name of the file each is in; without, the files that match.
pub async fn search(client: &Client, query: &SearchQuery, json: bool) -> Result<()> {
    let found = client.search(query).await?;
    if json {
        return output::print_json(&found);
    }
    if query.query.is_none() {
        let rows: Vec<Vec<String>> = found
            .files
            .iter()
            .map(|f| {
                vec![
                    f.id.to_string(),
                    f.kind.clone(),
                    f.file_size.to_string(),
                    f.folder.clone(),
                    f.file_name.clone(),
                ]
            })
            .collect();
        output::print_table(
            &[
                ("ID", Align::Left),
                ("TYPE", Align::Left),
                ("SIZE", Align::Right),
                ("FOLDER", Align::Left),
                ("NAME", Align::Left),
            ],
            &rows,
        );
        if let Some(next) = &found.next_cursor {
            println!("more: --cursor {}", shell_word(next));
        }
        return Ok(());
    }
    let moments = found.moments.unwrap_or_default();
    if moments.is_empty() {
        println!("Nothing found inside the files you have had read.");
        return Ok(());
    }
    let name_of = |id: Uuid| {
        found
            .files
            .iter()
            .find(|f| f.id == id)
            .map_or("?", |f| f.file_name.as_str())
            .to_string()
    };
    let rows: Vec<Vec<String>> = moments
        .iter()
        .map(|m| vec![name_of(m.file_id), place(m), m.entry_type.clone(), m.text.clone()])
        .collect();
    output::print_table(
        &[
            ("FILE", Align::Left),
            ("WHERE", Align::Left),
            ("KIND", Align::Left),
            ("TEXT", Align::Left),
        ],
        &rows,
    );
    Ok(())
}

/// Where in its file a moment is: a page, a span of time, or nothing for a text file.
fn place(m: &Moment) -> String {
    match (m.page, m.at, m.until) {
        (Some(page), _, _) => format!("page {page}"),
        (None, Some(at), Some(until)) => format!("{at:.1}–{until:.1} s"),
        (None, Some(at), None) => format!("{at:.1} s"),
        _ => String::new(),
    }
}

/// `text` as one word for a POSIX shell, to paste back: as it is when it holds nothing a shell
/// reads (a cursor by time or size), else in single quotes (a cursor by name holds the name).
fn shell_word(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_cursor_is_printed_as_one_shell_word() {
        assert_eq!(shell_word("n3f1c.1732900000000000"), "n3f1c.1732900000000000");
        assert_eq!(shell_word("a3f1c.My file.txt"), "'a3f1c.My file.txt'");
        assert_eq!(shell_word("a3f1c.it's $HOME"), "'a3f1c.it'\\''s $HOME'");
    }
}
