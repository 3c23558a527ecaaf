//! readForSearch: reads each input into moments, embeds them (all-MiniLM-L6-v2, `drive-embed`,
//! from the models folder the job's `Start` names) and has the supervisor store them
//! ([`store`], which replaces the file's earlier moments and marks it read).
//!
//! Each kind of file has one source: a function from the file to its moments, picked in
//! [`moments_of`]. Text files are the one source so far ([`text_moments`]); the PDF text layer
//! (a moment a page, `page` set), OCR of pictures and scanned pages (`text`) and speech
//! (`speech`, `at`/`until` set) are each another such function and a line there, plus their
//! kind in `drive_core::job::ReadForSearch`'s list.

use drive_core::db::PgPool;
use drive_core::db::files::FileRow;
use drive_core::db::jobs::JobRow;
use drive_core::db::moments::{self, EntryType, NewMoment};
use drive_core::file::FileKind;
use drive_core::id::FileId;
use drive_core::job::JobType;
use drive_embed::Embedder;
use serde_json::json;

use crate::context::{JobContext, JobError, JobResult};
use crate::protocol::{ReadMoment, Request};

/// Text read from a text file at most (1 MiB, some 1,700 moments): past it the file is not
/// read, and the job's result says so. It bounds the job's memory and its time (embedding
/// runs at ~50 moments a second on one core).
const MAX_TEXT_BYTES: u64 = 1 << 20;

/// Moments one file may have, checked again by the supervisor.
pub const MAX_MOMENTS: usize = 2_000;

/// A moment's text at most, in characters: a paragraph, or a few sentences of a long one.
const MAX_PASSAGE: usize = 600;

/// A moment before it is embedded.
#[derive(Debug, Clone, PartialEq)]
struct Passage {
    entry_type: EntryType,
    text: String,
    at: Option<f64>,
    until: Option<f64>,
    page: Option<i32>,
}

/// Reads every input; answers `{ files: [{ fileId, moments, truncated }] }`.
pub fn read_for_search(context: &JobContext) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    let embedder = Embedder::load(&context.models).map_err(|e| JobError::Server(e.to_string()))?;
    let mut files = Vec::new();
    for (n, file) in inputs.iter().enumerate() {
        let (passages, truncated) = match moments_of(context, file) {
            Ok(read) => read,
            Err(JobError::Input(why)) => {
                let reading = Err(why.clone());
                store_reading(context, file.id, reading)?;
                return Err(JobError::Input(why).in_file(&file.file_name));
            }
            Err(server) => return Err(server),
        };
        let texts: Vec<String> = passages.iter().map(|p| p.text.clone()).collect();
        let embeddings = embedder
            .embed(&texts)
            .map_err(|e| JobError::Server(e.to_string()))?;
        let read: Vec<ReadMoment> = passages
            .into_iter()
            .zip(embeddings)
            .map(|(p, embedding)| ReadMoment {
                entry_type: p.entry_type,
                text: p.text,
                at: p.at,
                until: p.until,
                page: p.page,
                embedding,
            })
            .collect();
        files.push(json!({ "fileId": file.id, "moments": read.len(), "truncated": truncated }));
        store_reading(context, file.id, Ok(read))?;
        context.progress((n + 1) as f32 / inputs.len() as f32);
    }
    Ok(json!({ "files": files }))
}

fn store_reading(
    context: &JobContext,
    file_id: FileId,
    reading: Result<Vec<ReadMoment>, String>,
) -> JobResult<()> {
    context.ask(&Request::StoreReading { file_id, reading })
}

/// A file's moments from the source for its kind, and whether the file was longer than what
/// was read.
fn moments_of(context: &JobContext, file: &FileRow) -> JobResult<(Vec<Passage>, bool)> {
    match file.kind {
        FileKind::Text => text_moments(context, file),
        _ => Err(JobError::Input(
            "files of this kind cannot be read for searching yet".into(),
        )),
    }
}

/// A text file's moments: its paragraphs (see [`passages`]), from its first
/// [`MAX_TEXT_BYTES`] in UTF-8.
fn text_moments(context: &JobContext, file: &FileRow) -> JobResult<(Vec<Passage>, bool)> {
    let size = file.file_size.max(0) as u64;
    if size == 0 {
        return Ok((Vec::new(), false));
    }
    let bytes = context.read_span(file, 0, size.min(MAX_TEXT_BYTES))?;
    let truncated = size > MAX_TEXT_BYTES;
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        // Cut at the limit inside a character: the text up to it.
        Err(e) if truncated && e.error_len().is_none() => {
            std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(e) => {
            return Err(JobError::Input(format!(
                "it is not text in UTF-8 (byte {} is not)",
                e.valid_up_to() + 1
            )));
        }
    };
    if text.contains('\0') {
        return Err(JobError::Input("it is not text: it holds NUL characters".into()));
    }
    let mut found: Vec<Passage> = passages(text)
        .into_iter()
        .map(|text| Passage {
            entry_type: EntryType::Text,
            text,
            at: None,
            until: None,
            page: None,
        })
        .collect();
    let more = found.len() > MAX_MOMENTS;
    found.truncate(MAX_MOMENTS);
    Ok((found, truncated || more))
}

/// Text cut into moments: each paragraph (lines up to a blank line, joined by spaces, spaces
/// collapsed) is one, and a paragraph over [`MAX_PASSAGE`] characters is cut between sentences
/// into pieces of at most that (a sentence longer than that between words). A paragraph is what
/// a person would quote as "where it says so", and a few sentences are what the model reads
/// well: it sees 256 tokens at most, some 1,000 characters.
fn passages(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut paragraph = String::new();
    for line in text.lines().chain([""]) {
        let line: String = line
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if line.trim().is_empty() {
            if !paragraph.is_empty() {
                pieces(&paragraph, &mut out);
                paragraph.clear();
            }
            continue;
        }
        for word in line.split_whitespace() {
            if !paragraph.is_empty() {
                paragraph.push(' ');
            }
            paragraph.push_str(word);
        }
    }
    out
}

/// `paragraph` (spaces collapsed) into pieces of at most [`MAX_PASSAGE`] characters, cut after
/// a sentence's end where one is near enough, else between words.
fn pieces(paragraph: &str, out: &mut Vec<String>) {
    let mut rest = paragraph;
    while rest.chars().count() > MAX_PASSAGE {
        let limit = rest
            .char_indices()
            .nth(MAX_PASSAGE)
            .map_or(rest.len(), |(i, _)| i);
        let head = &rest[..limit];
        let sentence_end = head
            .match_indices(['.', '!', '?'])
            .map(|(i, _)| i + 1)
            .rfind(|&i| rest[i..].starts_with(' '));
        let cut = sentence_end
            .or_else(|| head.rfind(' '))
            .filter(|&i| i > 0)
            .unwrap_or(limit);
        out.push(rest[..cut].trim().to_string());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
}

/// The supervisor's side: stores what a readForSearch job read from `file_id`, one of its
/// inputs, after checking it as hostile ([`checked`]).
pub async fn store(
    db: &PgPool,
    job: &JobRow,
    inputs: &[FileRow],
    file_id: FileId,
    reading: Result<Vec<ReadMoment>, String>,
) -> JobResult<()> {
    if job.job_type != JobType::ReadForSearch || !inputs.iter().any(|f| f.id == file_id) {
        return Err(JobError::Server(
            "a job process stored moments that are not its job's to store".into(),
        ));
    }
    match reading {
        Ok(read) => moments::replace(db, job.user_id, file_id, &checked(read)?).await?,
        Err(why) => moments::unreadable(db, job.user_id, file_id, &why).await?,
    }
    Ok(())
}

/// Moments from a job process, refused unless each is what a reading makes: at most
/// [`MAX_MOMENTS`], text of 1 to [`MAX_PASSAGE`] characters without NUL, places in range, and an
/// embedding of the model's length made of finite numbers.
fn checked(read: Vec<ReadMoment>) -> JobResult<Vec<NewMoment>> {
    let refused = |what: &str| JobError::Server(format!("a job process handed moments with {what}"));
    if read.len() > MAX_MOMENTS {
        return Err(refused("too many moments"));
    }
    read.into_iter()
        .map(|m| {
            let chars = m.text.chars().count();
            if chars == 0 || chars > MAX_PASSAGE || m.text.contains('\0') {
                return Err(refused("a text of the wrong length"));
            }
            let place_ok = m.at.is_none_or(|at| at.is_finite() && at >= 0.0)
                && m.until
                    .is_none_or(|until| until.is_finite() && m.at.is_some_and(|at| until >= at))
                && m.page.is_none_or(|page| page >= 1);
            if !place_ok {
                return Err(refused("a place out of range"));
            }
            if m.embedding.len() != drive_embed::DIMENSIONS || !m.embedding.iter().all(|x| x.is_finite()) {
                return Err(refused("an embedding that is not the model's"));
            }
            Ok(NewMoment {
                entry_type: m.entry_type,
                text: m.text,
                at: m.at,
                until: m.until,
                page: m.page,
                embedding: drive_embed::to_bytes(&m.embedding),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_are_moments_and_long_ones_are_cut_between_sentences() {
        let text = "Title\r\n\r\nFirst line of a paragraph\ncontinued  here.\n\n\n\tSecond.\n";
        assert_eq!(
            passages(text),
            ["Title", "First line of a paragraph continued here.", "Second."]
        );
        let sentence = "This sentence is exactly fifty characters long ok. ";
        let long = sentence.repeat(20);
        let cut = passages(&long);
        assert_eq!(cut.len(), 2);
        assert!(
            cut.iter()
                .all(|p| p.chars().count() <= MAX_PASSAGE && p.ends_with("ok."))
        );
        assert_eq!(cut.join(" "), long.trim());
        let words = "word ".repeat(300);
        assert!(
            passages(&words)
                .iter()
                .all(|p| p.chars().count() <= MAX_PASSAGE && !p.contains("  "))
        );
        let unbroken = "é".repeat(1500);
        assert_eq!(passages(&unbroken).concat(), unbroken);
    }

    #[test]
    fn moments_a_job_hands_over_are_checked() {
        let moment = |text: &str, at: Option<f64>, until: Option<f64>, dims: usize| ReadMoment {
            entry_type: EntryType::Speech,
            text: text.to_string(),
            at,
            until,
            page: None,
            embedding: vec![0.05; dims],
        };
        assert!(checked(vec![moment("said", Some(1.0), Some(2.0), 384)]).is_ok());
        assert!(checked(vec![moment("", None, None, 384)]).is_err());
        assert!(checked(vec![moment("nul\0", None, None, 384)]).is_err());
        assert!(checked(vec![moment("x", Some(2.0), Some(1.0), 384)]).is_err());
        assert!(checked(vec![moment("x", None, Some(1.0), 384)]).is_err());
        assert!(checked(vec![moment("x", None, None, 12)]).is_err());
        let many = (0..=MAX_MOMENTS).map(|_| moment("x", None, None, 384)).collect();
        assert!(checked(many).is_err());
    }
}
