//! `/read-file`: a file's content in a form a program (an agent, say) can take in at once: a
//! picture as a JPEG of at most 1568 pixels on a side, a video as one frame, a PDF as the text
//! of up to 20 pages, a text file 100 KB at a time. It reaches what a download would: the
//! caller's own files and public ones. The bytes are opened by `drive-reader`, never here
//! ([`crate::reader`]).

use axum::extract::State;
use drive_core::db::files::{self, FileRow};
use drive_core::file::FileKind;
use drive_core::id::FileId;
use drive_core::input::Bounded;
use drive_core::read::{MAX_PAGES, PageSpan, Reading};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::reader::LINK_LIFETIME;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(read_file))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadFileInput {
    file_id: FileId,
    /// Seconds into a video (at least 0); default a tenth of the way in.
    at: Option<f64>,
    /// First PDF page; default 1.
    from_page: Option<Bounded<1, { u32::MAX as i64 }>>,
    /// Last PDF page, at most 20 pages on; default ten pages. Past the end reads to the end.
    to_page: Option<Bounded<1, { u32::MAX as i64 }>>,
    /// Where to go on from in a text file (a byte offset, as `nextOffset` gives it).
    offset: Option<Bounded<0, { i64::MAX }>>,
}

/// What was read.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadFileAnswer {
    id: FileId,
    file_name: String,
    #[serde(rename = "type")]
    kind: FileKind,
    mime_type: String,
    file_size: i64,
    /// What this answer holds and how to go on, or why there is nothing to read.
    note: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    image: Option<ReadImage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// The moment of a video's frame, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<f64>,
    /// A video's length in seconds, when its container says.
    #[serde(skip_serializing_if = "Option::is_none")]
    duration: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pages: Option<Pages>,
    /// Where the next piece of a text file starts; absent at its end.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadImage {
    /// The picture's bytes, base64.
    data: String,
    mime_type: String,
}

/// The pages read and how many the PDF has.
#[derive(Debug, Serialize, ToSchema)]
pub struct Pages {
    from: u32,
    to: u32,
    total: u32,
}

/// Reads a file: a picture (HEIC and camera RAW included) as a JPEG at most 1568 pixels on a
/// side, a video as the frame at `at` (or a tenth of the way in), a PDF as the text of up to 20
/// whole pages within 100 KB, a text file as up to 100 KB from `offset`. Anything else comes
/// back with a note and nothing to read.
#[utoipa::path(post, path = "/read-file", tag = "download", request_body = ReadFileInput,
    responses((status = 200, body = ReadFileAnswer)))]
async fn read_file(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<ReadFileInput>,
) -> ApiResult<axum::Json<ReadFileAnswer>> {
    let at = match input.at {
        Some(at) if !at.is_finite() || at < 0.0 => {
            return Err(ApiError::invalid("at", "at is a number of seconds, at least 0"));
        }
        at => at,
    };
    let from = input.from_page.map_or(1, |n| n.get() as u32);
    let to = input.to_page.map(|n| n.get() as u32);
    if let Some(to) = to {
        if to < from {
            return Err(ApiError::invalid("toPage", "toPage is at least fromPage"));
        }
        if to - from >= MAX_PAGES {
            return Err(ApiError::invalid(
                "toPage",
                format!(
                    "at most {MAX_PAGES} pages are read at once: toPage is at most fromPage + {}",
                    MAX_PAGES - 1
                ),
            ));
        }
    }
    let offset = input.offset.map_or(0, |n| n.get() as u64);
    // Another account's private file, a trashed one and none at all answer alike.
    let file = files::find(&state.db, input.file_id)
        .await?
        .filter(|f| f.trashed_at.is_none() && (f.is_public() || f.user_id == caller.user_id))
        .ok_or_else(|| ApiError::not_found("file_not_found", "no file you can open has that id"))?;
    let reading = match how_to_read(&file) {
        How::Picture => Reading::Picture,
        How::Frame => Reading::Frame { at },
        How::PdfText => Reading::PdfText { from, to },
        How::Text => {
            if offset > file.file_size as u64 {
                return Err(ApiError::invalid(
                    "offset",
                    format!(
                        "offset is past the end of the text, which has {} bytes",
                        file.file_size
                    ),
                ));
            }
            Reading::Text { offset }
        }
        How::Nothing(note) => return Ok(axum::Json(answer(&file, note.to_string()))),
    };
    let url = state
        .storage
        .presign_get(file.bucket, &file.object_key, &file.file_name, LINK_LIFETIME)
        .await?;
    let read = state.reader.read(url, file.file_size as u64, reading).await?;
    Ok(axum::Json(ReadFileAnswer {
        image: read.jpeg.map(|data| ReadImage {
            data,
            mime_type: "image/jpeg".into(),
        }),
        text: read.text,
        at: read.at,
        duration: read.duration,
        pages: read
            .pages
            .map(|PageSpan { from, to, total }| Pages { from, to, total }),
        next_offset: read.next_offset,
        ..answer(&file, read.note)
    }))
}

/// How a file is read, from what was recorded of it (never from its bytes: those are the
/// reader's to open).
#[derive(Debug, PartialEq)]
enum How {
    Picture,
    Frame,
    PdfText,
    Text,
    Nothing(&'static str),
}

/// Audio is read as what is said in it once its owner has had it read for searching inside
/// files; until then there is nothing to read.
const AUDIO_NOT_READ: &str =
    "Nobody has had this audio read for searching inside files, so there is nothing to read yet.";

const NOTHING: &str =
    "This kind of file has nothing to read: only pictures, videos, PDFs and text files are read.";

fn how_to_read(file: &FileRow) -> How {
    let mime = file.mime_type.as_str();
    match file.kind {
        // An SVG picture is XML: its text is what there is to read.
        _ if drive_core::file::is_text_type(mime) => How::Text,
        FileKind::Image => How::Picture,
        FileKind::Video => How::Frame,
        FileKind::Audio => How::Nothing(AUDIO_NOT_READ),
        FileKind::Pdf => How::PdfText,
        FileKind::Text => How::Text,
        FileKind::Archive | FileKind::Other => match mime {
            "application/pdf" => How::PdfText,
            _ => How::Nothing(NOTHING),
        },
    }
}

/// The file's own fields, and `note`.
fn answer(file: &FileRow, note: String) -> ReadFileAnswer {
    ReadFileAnswer {
        id: file.id,
        file_name: file.file_name.clone(),
        kind: file.kind,
        mime_type: file.mime_type.clone(),
        file_size: file.file_size,
        note,
        image: None,
        text: None,
        at: None,
        duration: None,
        pages: None,
        next_offset: None,
    }
}
