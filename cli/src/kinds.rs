//! A file's `type` and `mimeType`, told from its extension. The kinds mirror
//! `drive_core::file::FileKind`; the CLI does not link the server's crate for one enum.

use std::path::Path;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FileKind {
    Video,
    Audio,
    Image,
    Pdf,
    Text,
    Archive,
    Other,
}

const OCTET_STREAM: &str = "application/octet-stream";

/// Extension (lower case), kind and content type. Anything not listed is `Other`, sent as
/// `application/octet-stream`.
const BY_EXTENSION: &[(&str, FileKind, &str)] = &[
    ("mp4", FileKind::Video, "video/mp4"),
    ("m4v", FileKind::Video, "video/x-m4v"),
    ("mov", FileKind::Video, "video/quicktime"),
    ("webm", FileKind::Video, "video/webm"),
    ("mkv", FileKind::Video, "video/x-matroska"),
    ("avi", FileKind::Video, "video/x-msvideo"),
    ("mp3", FileKind::Audio, "audio/mpeg"),
    ("m4a", FileKind::Audio, "audio/mp4"),
    ("aac", FileKind::Audio, "audio/aac"),
    ("wav", FileKind::Audio, "audio/wav"),
    ("flac", FileKind::Audio, "audio/flac"),
    ("ogg", FileKind::Audio, "audio/ogg"),
    ("opus", FileKind::Audio, "audio/opus"),
    ("jpg", FileKind::Image, "image/jpeg"),
    ("jpeg", FileKind::Image, "image/jpeg"),
    ("png", FileKind::Image, "image/png"),
    ("gif", FileKind::Image, "image/gif"),
    ("webp", FileKind::Image, "image/webp"),
    ("heic", FileKind::Image, "image/heic"),
    ("avif", FileKind::Image, "image/avif"),
    ("tif", FileKind::Image, "image/tiff"),
    ("tiff", FileKind::Image, "image/tiff"),
    ("svg", FileKind::Image, "image/svg+xml"),
    ("pdf", FileKind::Pdf, "application/pdf"),
    ("txt", FileKind::Text, "text/plain"),
    ("md", FileKind::Text, "text/markdown"),
    ("csv", FileKind::Text, "text/csv"),
    ("json", FileKind::Text, "application/json"),
    ("html", FileKind::Text, "text/html"),
    ("srt", FileKind::Text, "application/x-subrip"),
    ("vtt", FileKind::Text, "text/vtt"),
    ("zip", FileKind::Archive, "application/zip"),
    ("tar", FileKind::Archive, "application/x-tar"),
    ("gz", FileKind::Archive, "application/gzip"),
    ("tgz", FileKind::Archive, "application/gzip"),
    ("7z", FileKind::Archive, "application/x-7z-compressed"),
    ("rar", FileKind::Archive, "application/vnd.rar"),
];

/// The kind and content type of a file named `name`.
pub fn for_name(name: &str) -> (FileKind, &'static str) {
    let extension = Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    extension
        .and_then(|ext| BY_EXTENSION.iter().find(|(e, _, _)| *e == ext))
        .map_or((FileKind::Other, OCTET_STREAM), |&(_, kind, mime)| (kind, mime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_tell_kind_and_content_type() {
        assert_eq!(for_name("Clip.MP4"), (FileKind::Video, "video/mp4"));
        assert_eq!(for_name("notes.txt"), (FileKind::Text, "text/plain"));
        assert_eq!(for_name("scan.pdf"), (FileKind::Pdf, "application/pdf"));
        assert_eq!(for_name("blob.bin"), (FileKind::Other, OCTET_STREAM));
        assert_eq!(for_name("README"), (FileKind::Other, OCTET_STREAM));
    }
}
