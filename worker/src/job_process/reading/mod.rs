//! readForSearch: reads each input into moments and hands them to the supervisor, which embeds
//! them (all-MiniLM-L6-v2, `drive-embed`, loaded once for the worker) and stores them in place
//! of the file's earlier moments, marking it read.
//!
//! Each kind of file has one source, a function from the file to its moments, picked in
//! [`moments_of`]: text files their paragraphs ([`text`]), PDFs the text layer of each page and
//! OCR of the pages that have none ([`documents`]), pictures OCR ([`pictures`]), audio and the
//! sound of videos what is said, with times ([`speech`]). Where the worker has a describing
//! model (the supervisor's `vision`, asked through the protocol), pictures and a video's
//! stretches ([`scenes`]) also get `visual` moments.

pub mod captions;
mod documents;
mod passages;
mod pictures;
mod scenes;
mod speech;
mod text;

use drive_domain::file::FileKind;
use drive_domain::id::FileId;
use drive_domain::moment::EntryType;
use drive_domain::rows::FileRow;
use serde_json::json;

use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult, MAX_MOMENTS, MAX_PASSAGE, ReadMoment, Request};

/// A moment before it is embedded.
#[derive(Debug, Clone, PartialEq)]
struct Passage {
    entry_type: EntryType,
    text: String,
    at: Option<f64>,
    until: Option<f64>,
    page: Option<i32>,
}

impl Passage {
    /// What a describing model saw: in a picture, or in a stretch of a video.
    fn seen(text: String, span: Option<(f64, f64)>) -> Passage {
        Passage {
            entry_type: EntryType::Visual,
            text,
            at: span.map(|s| s.0),
            until: span.map(|s| s.1),
            page: None,
        }
    }

    /// Written words with no place in time: on `page` of a document, or anywhere in a file.
    fn written(text: String, page: Option<u32>) -> Passage {
        Passage {
            entry_type: EntryType::Text,
            text,
            at: None,
            until: None,
            page: page.map(|n| n as i32),
        }
    }
}

/// What a source read of one file: its moments, and whether the file held more than was read.
#[derive(Debug, Default)]
struct Reading {
    passages: Vec<Passage>,
    truncated: bool,
}

impl Reading {
    /// At most [`MAX_MOMENTS`] passages, `truncated` when there were more (or the source
    /// already stopped early).
    fn of(mut passages: Vec<Passage>, truncated: bool) -> Reading {
        let more = passages.len() > MAX_MOMENTS;
        passages.truncate(MAX_MOMENTS);
        Reading {
            passages,
            truncated: truncated || more,
        }
    }
}

/// Reads every input; answers `{ files: [{ fileId, moments, truncated }] }`.
pub fn read_for_search(context: &JobContext) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    let mut files = Vec::new();
    let count = inputs.len() as f64;
    for (n, file) in inputs.iter().enumerate() {
        let progress = |done: f64| context.progress(((n as f64 + done.clamp(0.0, 1.0)) / count) as f32);
        let Reading { passages, truncated } = match moments_of(context, file, &progress) {
            Ok(read) => read,
            Err(JobError::Input(why)) => {
                store_reading(context, file.id, Err(why.clone()))?;
                return Err(JobError::Input(why).in_file(&file.file_name));
            }
            Err(server) => return Err(server),
        };
        let read: Vec<ReadMoment> = passages
            .into_iter()
            .map(|p| ReadMoment {
                entry_type: p.entry_type,
                text: p.text,
                at: p.at,
                until: p.until,
                page: p.page,
            })
            .collect();
        files.push(json!({ "fileId": file.id, "moments": read.len(), "truncated": truncated }));
        store_reading(context, file.id, Ok(read))?;
        progress(1.0);
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

/// A file's moments from the source for its kind. `progress` takes the part of the file read.
fn moments_of(context: &JobContext, file: &FileRow, progress: &dyn Fn(f64)) -> JobResult<Reading> {
    match file.kind {
        FileKind::Text => text::moments(context, file),
        FileKind::Pdf => documents::moments(context, file, progress),
        FileKind::Image => pictures::moments(context, file),
        FileKind::Audio => speech::moments(context, file, progress),
        FileKind::Video => {
            let said = speech::moments(context, file, progress)?;
            let (seen, more) = scenes::moments(context, file)?;
            let mut passages = said.passages;
            passages.extend(seen);
            Ok(Reading::of(passages, said.truncated || more))
        }
        FileKind::Archive | FileKind::Other => Err(JobError::Input(
            "only text files, PDFs, pictures, audio and videos can be read for searching".into(),
        )),
    }
}
