use std::io;

use image::ImageError;

/// Why a picture job failed. The text is meant for the person who ran the job.
#[derive(Debug, thiserror::Error)]
pub enum PictureError {
    /// The file is damaged, truncated or not really a picture (client).
    #[error("the picture could not be read: {0}")]
    Unreadable(String),
    /// A picture this crate does not handle, or an operation its format does not allow (client).
    #[error("this picture is not supported: {0}")]
    Unsupported(String),
    /// Too many pixels to decode safely, or too big for the requested output format (client).
    #[error("the picture is too large: {0}")]
    TooLarge(String),
    /// The job asked for something impossible, e.g. a 0 pixel edge (client).
    #[error("invalid picture options: {0}")]
    InvalidOptions(String),
    /// The watermark font given by the caller is not a TrueType/OpenType font (server).
    #[error("the watermark font could not be loaded: {0}")]
    Font(String),
    /// An encoder failed on pixels it should have accepted (server).
    #[error("the picture could not be written: {0}")]
    Encode(String),
    /// Reading or writing a local file failed (server).
    #[error("reading or writing a file failed: {0}")]
    Io(#[from] io::Error),
}

impl PictureError {
    /// True when the input or the options are at fault, so retrying the same job cannot help.
    pub fn is_client_error(&self) -> bool {
        match self {
            PictureError::Unreadable(_)
            | PictureError::Unsupported(_)
            | PictureError::TooLarge(_)
            | PictureError::InvalidOptions(_) => true,
            PictureError::Font(_) | PictureError::Encode(_) | PictureError::Io(_) => false,
        }
    }

    /// For a file that ends before its structure says it should.
    pub(crate) fn truncated() -> Self {
        PictureError::Unreadable("the file ends too early".into())
    }

    /// Classifies an error of the `image` crate met while decoding: everything the input can cause
    /// is the client's; only a failing disk is ours.
    pub(crate) fn decoding(error: ImageError) -> Self {
        match error {
            ImageError::IoError(e) if e.kind() == io::ErrorKind::UnexpectedEof => Self::truncated(),
            ImageError::IoError(e) if e.kind() == io::ErrorKind::InvalidData => {
                PictureError::Unreadable(e.to_string())
            }
            ImageError::IoError(e) => PictureError::Io(e),
            ImageError::Limits(e) => PictureError::TooLarge(e.to_string()),
            ImageError::Unsupported(e) => PictureError::Unsupported(e.to_string()),
            ImageError::Decoding(_) | ImageError::Parameter(_) | ImageError::Encoding(_) => {
                PictureError::Unreadable(error.to_string())
            }
        }
    }

    /// Classifies an error of the `image` crate met while encoding pixels we produced.
    pub(crate) fn encoding(error: ImageError) -> Self {
        match error {
            ImageError::IoError(e) => PictureError::Io(e),
            other => PictureError::Encode(other.to_string()),
        }
    }
}
