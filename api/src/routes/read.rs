//! `/read-file`: a file's content in a form a program (an agent, say) can take in at once: a
//! picture as a JPEG of at most 1568 pixels on a side, a video as one frame, a PDF as the text
//! of up to 20 pages, a text file 100 KB at a time, and what is said in audio and videos their
//! owner has had read (about five minutes at a time). It reaches what a download would: the
//! caller's own files and public ones. The bytes are opened by `drive-reader`, never here
//! ([`crate::reader`]); what is said comes from the file's moments.

use axum::extract::State;
use drive_core::db::PgPool;
use drive_core::db::files::{self, FileRow};
use drive_core::db::moments::{self, Said};
use drive_core::db::shares;
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
use crate::routes::download;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(read_file))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadFileInput {
    file_id: FileId,
    /// Seconds into a video (at least 0; default a tenth of the way in), or into audio (default
    /// 0), where what is said is read from.
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
    /// What is said in audio or a video, about five minutes from `at`, in order of time:
    /// present once the owner has had the file read (readForSearch).
    #[serde(skip_serializing_if = "Option::is_none")]
    said: Option<Vec<Said>>,
    /// The `at` to read what is said next; absent when nothing more is said.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_at: Option<f64>,
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
/// whole pages within 100 KB, a text file as up to 100 KB from `offset`; audio and videos the
/// owner has had read also answer what is said, about five minutes from `at` (`said`,
/// `nextAt`). Anything else comes back with a note and nothing to read.
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
    // Another account's private file not shared with the caller, a trashed one and none at all
    // answer alike.
    let file = match files::find(&state.db, input.file_id)
        .await?
        .filter(|f| f.trashed_at.is_none())
    {
        Some(f) if f.is_public() || f.user_id == caller.user_id => Some(f),
        Some(_) => shares::visible(&state.db, caller.user_id, input.file_id).await?,
        None => None,
    };
    let file =
        file.ok_or_else(|| ApiError::not_found("file_not_found", "no file you can open has that id"))?;
    let file = download::as_stored(&state, file).await?;
    let reading = match how_to_read(&file) {
        How::Said => {
            let from = at.unwrap_or(0.0);
            return Ok(axum::Json(match said_from(&state.db, &file, from).await? {
                Some((said, next_at)) => ReadFileAnswer {
                    said: Some(said),
                    next_at,
                    ..answer(&file, said_note(from, next_at))
                },
                None => answer(&file, AUDIO_NOT_READ.to_string()),
            }));
        }
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
    let (said, next_at, note) = match (file.kind, read.at) {
        (FileKind::Video, Some(frame)) => match said_from(&state.db, &file, frame).await? {
            Some((said, next_at)) => (
                Some(said),
                next_at,
                format!("{} {}", read.note, said_note(frame, next_at)),
            ),
            None => (None, None, read.note),
        },
        _ => (None, None, read.note),
    };
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
        said,
        next_at,
        ..answer(&file, note)
    }))
}

/// What is said is read this many seconds at a time.
const SAID_SECONDS: f64 = 300.0;

/// What is said in `file` from `from` for about [`SAID_SECONDS`], and where to go on from;
/// `None` when its owner has not had it read.
async fn said_from(db: &PgPool, file: &FileRow, from: f64) -> ApiResult<Option<(Vec<Said>, Option<f64>)>> {
    if moments::read_files(db, file.user_id, &[file.id])
        .await?
        .is_empty()
    {
        return Ok(None);
    }
    // A file has at most a few thousand moments: the rest of them is fetched and cut here.
    let mut said = moments::said(db, file.id, Some(from), None).await?;
    let rest = said.partition_point(|s| s.at < from + SAID_SECONDS);
    let next_at = said.get(rest).map(|s| s.at);
    said.truncate(rest);
    Ok(Some((said, next_at)))
}

fn said_note(from: f64, next_at: Option<f64>) -> String {
    match next_at {
        Some(next) => format!(
            "What is said from {from:.1} s for about five minutes; read again with at = {next:.1} for more."
        ),
        None => format!("What is said from {from:.1} s to the end."),
    }
}

/// How a file is read, from what was recorded of it (never from its bytes: those are the
/// reader's to open).
#[derive(Debug, PartialEq)]
enum How {
    Picture,
    Frame,
    PdfText,
    Text,
    /// What is said (audio).
    Said,
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
        FileKind::Audio => How::Said,
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
        said: None,
        next_at: None,
    }
}
