//! What the API and its reader (`drive-reader`, the process that opens one file for
//! `/read-file`) say to each other: a [`ReadRequest`] as one JSON document on the reader's
//! stdin, a [`ReadAnswer`] on its stdout. The reader holds no credential: the request
//! carries a presigned GET of the one object it may read.

use serde::{Deserialize, Serialize};

/// The longest side of a picture `/read-file` answers, in pixels.
pub const MAX_PICTURE_EDGE: u32 = 1568;

/// The most text one read answers: a text file's piece, or a PDF's whole pages (100 KB).
pub const MAX_TEXT_BYTES: usize = 100_000;

/// The most pages of a PDF one read answers, and how many when `toPage` is not given.
pub const MAX_PAGES: u32 = 20;
pub const DEFAULT_PAGES: u32 = 10;

/// The largest picture or PDF the reader downloads (it holds them whole: a picture is
/// decoded from all its bytes, a PDF's pages point anywhere in it). Past it a file is too
/// big to read.
pub const MAX_DOWNLOAD_BYTES: u64 = 200_000_000;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadRequest {
    /// A presigned GET of the file's object: the only thing the reader may open.
    pub url: String,
    /// The file's size as recorded.
    pub size: u64,
    /// A folder of the reader's own for what it writes while reading (the only one it may
    /// write to); the API removes it afterwards.
    pub dir: std::path::PathBuf,
    pub what: Reading,
}

/// How the file is read, from its recorded kind and media type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Reading {
    /// A picture (HEIC and camera RAW included), answered as a JPEG.
    Picture,
    /// A video's frame at `at` seconds, or a tenth of the way in.
    Frame { at: Option<f64> },
    /// A PDF's text, pages `from` to `to` (`None`: [`DEFAULT_PAGES`] pages).
    PdfText { from: u32, to: Option<u32> },
    /// A text file from byte `offset`.
    Text { offset: u64 },
}

/// What the reader answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReadAnswer {
    Read(Read),
    /// The file cannot be opened, or is too big to read (422 `unreadable`).
    Unreadable(String),
    /// The store did not hand the file over (502 `fetching_file_failed`).
    FetchFailed(String),
    /// A request field the file makes unusable: `at` past a video's end, `fromPage` past
    /// the last page (400 naming the field).
    BadField {
        field: String,
        message: String,
    },
}

/// What was read; the API adds the file's own fields.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Read {
    pub note: String,
    /// A JPEG's bytes, base64.
    pub jpeg: Option<String>,
    pub text: Option<String>,
    pub at: Option<f64>,
    pub duration: Option<f64>,
    pub pages: Option<PageSpan>,
    pub next_offset: Option<u64>,
}

/// The pages read and how many there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSpan {
    pub from: u32,
    pub to: u32,
    pub total: u32,
}
