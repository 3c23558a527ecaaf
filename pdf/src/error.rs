//! The crate's error type, and the guard that turns a panic inside a PDF library into an error.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Why a PDF pipeline failed.
///
/// The `Display` text is meant for the person who started the job: the worker shows it as the
/// job's error. [`PdfError::is_client_error`] tells a problem with the input (which retrying won't
/// fix) from a problem on our side.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    /// The file is not a PDF, or is damaged beyond what the readers can repair.
    #[error("the PDF could not be read: {0}")]
    Unreadable(String),
    /// The file needs a password to open.
    #[error("the PDF is protected by a password; remove the password and try again")]
    Encrypted,
    /// A page number beyond the end of the document.
    #[error("page {page} does not exist: the PDF has {count} page{}", if *count == 1 { "" } else { "s" })]
    NoSuchPage { page: u32, count: u32 },
    /// A parameter the caller passed makes no sense (a bad page list, a zero part size, a
    /// resolution too high to render…). The text says what is wrong.
    #[error("{0}")]
    BadInput(String),
    /// A picture given to [`crate::from_pictures`] could not be decoded.
    #[error("the picture could not be read: {0}")]
    UnreadablePicture(String),
    /// An error about one of several inputs, saying which one (1-based) so that the user can
    /// find it.
    #[error("file {number} of {count}: {source}")]
    Input {
        number: usize,
        count: usize,
        source: Box<PdfError>,
    },
    /// Reading an input or writing an output failed on our side.
    #[error("file system error: {0}")]
    Io(#[from] std::io::Error),
    /// The renderer produced something unusable.
    #[error("the page could not be rendered: {0}")]
    Render(String),
    /// Producing the output failed although the input was fine.
    #[error("the PDF could not be written: {0}")]
    Write(String),
}

impl PdfError {
    /// Whether the input (or a parameter) is at fault, as opposed to our side.
    pub fn is_client_error(&self) -> bool {
        match self {
            PdfError::Unreadable(_)
            | PdfError::Encrypted
            | PdfError::NoSuchPage { .. }
            | PdfError::BadInput(_)
            | PdfError::UnreadablePicture(_) => true,
            PdfError::Input { source, .. } => source.is_client_error(),
            PdfError::Io(_) | PdfError::Render(_) | PdfError::Write(_) => false,
        }
    }

    /// Names the input this error is about, when there are several.
    pub(crate) fn in_input(self, index: usize, count: usize) -> PdfError {
        if count == 1 {
            return self;
        }
        PdfError::Input {
            number: index + 1,
            count,
            source: Box::new(self),
        }
    }
}

/// Maps an error of `lopdf` met while loading or walking a document.
impl From<lopdf::Error> for PdfError {
    fn from(error: lopdf::Error) -> Self {
        use lopdf::{DecompressError, Error, ParseError};
        match error {
            Error::IO(io) => PdfError::Io(io),
            Error::Decryption(_)
            | Error::InvalidPassword
            | Error::UnsupportedSecurityHandler(_)
            | Error::AlreadyEncrypted => PdfError::Encrypted,
            Error::Parse(ParseError::InvalidFileHeader) => unreadable("it is not a PDF file"),
            Error::Parse(ParseError::EndOfInput) => unreadable("the file is truncated"),
            Error::Decompress(DecompressError::MemoryLimitExceeded { .. }) => {
                unreadable("part of it is too large once decompressed")
            }
            Error::Xref(_) | Error::Parse(ParseError::InvalidXref) | Error::MissingXrefEntry => {
                unreadable("its cross-reference table is damaged")
            }
            Error::ReferenceCycle(_) | Error::ReferenceLimit | Error::RecursionLimit => {
                unreadable("its object structure loops or is nested too deeply")
            }
            Error::Parse(_) => unreadable("it is damaged or not a PDF file"),
            other => PdfError::Unreadable(format!("it is damaged ({other})")),
        }
    }
}

pub(crate) fn unreadable(cause: &str) -> PdfError {
    PdfError::Unreadable(cause.to_string())
}

/// Runs `work`, turning a panic into [`PdfError::Unreadable`].
///
/// `lopdf`, `hayro` and the image decoders are fed untrusted files and may still panic on
/// hostile ones. The worker isolates each job in a child process anyway, but a clean error
/// tells the user what happened instead of a crashed job. The panic message itself still
/// reaches stderr through the panic hook, for the logs.
pub(crate) fn guard<T>(work: impl FnOnce() -> Result<T, PdfError>) -> Result<T, PdfError> {
    catch_unwind(AssertUnwindSafe(work))
        .unwrap_or_else(|_| Err(unreadable("it is malformed in a way that could not be handled")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_client_error() {
        let result: Result<(), PdfError> = guard(|| panic!("hostile input"));
        let error = result.expect_err("the panic must surface as an error");
        assert!(error.is_client_error());
        assert!(error.to_string().starts_with("the PDF could not be read: "));
    }

    #[test]
    fn an_input_error_keeps_its_kind_and_names_the_file() {
        let error = PdfError::Encrypted.in_input(1, 3);
        assert!(error.is_client_error());
        assert!(error.to_string().starts_with("file 2 of 3: the PDF is protected"));
        let server = PdfError::Write("disk full".into()).in_input(0, 2);
        assert!(!server.is_client_error());
        // "file 1 of 1" would tell the user nothing.
        assert!(matches!(PdfError::Encrypted.in_input(0, 1), PdfError::Encrypted));
    }

    #[test]
    fn no_such_page_reads_naturally() {
        let error = PdfError::NoSuchPage { page: 5, count: 1 };
        assert_eq!(error.to_string(), "page 5 does not exist: the PDF has 1 page");
        let error = PdfError::NoSuchPage { page: 9, count: 4 };
        assert_eq!(error.to_string(), "page 9 does not exist: the PDF has 4 pages");
    }
}
