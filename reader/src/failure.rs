//! Why a read failed, in the three ways the API tells apart.

use drive_domain::read::ReadAnswer;
use drive_media::av::AvError;
use drive_media::picture::PictureError;
use drive_pdf::PdfError;

#[derive(Debug)]
pub enum Failure {
    /// The file cannot be opened or is too big (422 `unreadable`).
    Unreadable(String),
    /// The store did not hand it over (502 `fetching_file_failed`).
    Fetch(String),
    /// A field the file makes unusable (400).
    BadField { field: &'static str, message: String },
}

impl Failure {
    pub fn into_answer(self) -> ReadAnswer {
        match self {
            Failure::Unreadable(why) => ReadAnswer::Unreadable(why),
            Failure::Fetch(why) => ReadAnswer::FetchFailed(why),
            Failure::BadField { field, message } => ReadAnswer::BadField {
                field: field.to_string(),
                message,
            },
        }
    }
}

/// Everything a picture can fail with is the file's (a failing disk here is too, as far as
/// the caller can tell: the read cannot be done).
impl From<PictureError> for Failure {
    fn from(e: PictureError) -> Failure {
        Failure::Unreadable(e.to_string())
    }
}

impl From<PdfError> for Failure {
    fn from(e: PdfError) -> Failure {
        Failure::Unreadable(e.to_string())
    }
}

impl From<AvError> for Failure {
    fn from(e: AvError) -> Failure {
        match e {
            AvError::Input(why) => Failure::Unreadable(why),
            // The object answered moments ago: a broken connection now is the store's.
            AvError::Machine(why) => Failure::Fetch(why),
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::Unreadable(format!("the file could not be read here: {e}"))
    }
}
