//! A text file's moments: its paragraphs.

use drive_domain::rows::FileRow;

use super::passages::passages;
use super::{Passage, Reading};
use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult};

/// Text read from a text file at most (1 MiB, some 1,700 moments): past it the file is not
/// read, and the job's result says so. It bounds the job's memory and its time (embedding
/// runs at ~50 moments a second on one core).
const MAX_TEXT_BYTES: u64 = 1 << 20;

/// The file's paragraphs (see [`passages`]), from its first [`MAX_TEXT_BYTES`] in UTF-8.
pub fn moments(context: &JobContext, file: &FileRow) -> JobResult<Reading> {
    let size = file.file_size.max(0) as u64;
    if size == 0 {
        return Ok(Reading::default());
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
    let found = passages(text)
        .into_iter()
        .map(|text| Passage::written(text, None))
        .collect();
    Ok(Reading::of(found, truncated))
}
