//! A tool's failure as a model can act on it: the drive's own sentence and code, then what to
//! do next. Hosts hand it to the model as a tool error, which the model reads.

use std::fmt;

use crate::ApiError;

#[derive(Debug)]
pub struct Failure {
    what: String,
    next: Option<String>,
}

impl Failure {
    pub fn new(what: impl Into<String>) -> Failure {
        Failure {
            what: what.into(),
            next: None,
        }
    }

    /// What the caller can do about it.
    pub fn next(mut self, next: impl Into<String>) -> Failure {
        self.next = Some(next.into());
        self
    }

    /// `error` explained: a failure a tool made as it is, the drive's refusal with what to do
    /// next, anything else (unreachable, storage refusing bytes, not enough room, a local file)
    /// in the client library's sentence.
    pub fn explain(error: anyhow::Error) -> Failure {
        let error = match error.downcast::<Failure>() {
            Ok(failure) => return failure,
            Err(error) => error,
        };
        let Some(api) = error.downcast_ref::<ApiError>() else {
            return Failure::new(format!("{error:#}."));
        };
        let failure = Failure::new(format!("{api}."));
        match next_step(api) {
            Some(next) => failure.next(next),
            None => failure,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.what)?;
        if let Some(next) = &self.next {
            write!(f, " {next}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

/// What to do after the drive refused with `error`.
fn next_step(error: &ApiError) -> Option<String> {
    let next = match error.code.as_str() {
        "file_not_found" => {
            "Find the file's id with list_files; a trashed file must be restored with restore_files first."
        }
        "file_trashed" => "Restore the file with restore_files first.",
        "unauthorized" => {
            "The drive API token was refused: check DRIVE_API_TOKEN (stdio) or the Authorization: Bearer header (HTTP)."
        }
        "storage_full" | "no_plan" => {
            "Free space with remove_files (permanently: true) or choose a larger plan."
        }
        _ if error.field.is_some() => {
            return error
                .field
                .as_ref()
                .map(|f| format!("Correct {f} and call again."));
        }
        _ if error.retryable => "This passes with time: call again in a few seconds.",
        _ => return None,
    };
    Some(next.to_string())
}
