//! The headers an object is stored with, and so served with by the store.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// RFC 5987 `attr-char`s stay as they are in a `filename*` parameter; the rest is encoded.
const ATTR_CHAR_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// The Content-Type and Content-Disposition an object is stored with, and so served with by
/// the store (public objects, and private ones through presigned links). Only a file a browser
/// shows without running anything keeps its type and `disposition` ([`SHOWN_TYPES`], named
/// [`SHOWN_EXTENSIONS`] or nothing); every other file is stored as an opaque download, so an
/// upload cannot run script on the store's origin, whatever type a browser learns next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHeaders {
    pub content_type: String,
    pub content_disposition: String,
}

/// The types kept and shown as they are. An allow-list: a type left off is a download. Each is
/// drawn by the browser itself and runs no script: pictures (not SVG, a document that may hold
/// script), audio and video (the media element), PDF (the browsers' viewers run a PDF's own
/// script, if at all, sandboxed away from the page's origin) and plain text. The store cannot
/// send `nosniff`, so sniffing matters too: a browser sniffs a picture or a medium only into
/// another picture or medium, and `text/plain` only into a download, never into HTML.
pub const SHOWN_TYPES: [&str; 25] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/avif",
    "image/bmp",
    "image/heic",
    "image/heif",
    "image/x-icon",
    "audio/mpeg",
    "audio/mp4",
    "audio/aac",
    "audio/ogg",
    "audio/opus",
    "audio/wav",
    "audio/x-wav",
    "audio/flac",
    "audio/webm",
    "video/mp4",
    "video/webm",
    "video/ogg",
    "video/quicktime",
    "video/x-matroska",
    "application/pdf",
    "text/plain",
];

/// The extensions a shown file may be named with. The store (SeaweedFS) types a key by its
/// extension whatever it was sent, so a name must not make an HTML page of a `image/png`.
pub const SHOWN_EXTENSIONS: [&str; 27] = [
    "png", "jpg", "jpeg", "gif", "webp", "avif", "bmp", "ico", "heic", "heif", "mp3", "m4a", "aac", "ogg",
    "oga", "opus", "wav", "flac", "weba", "mp4", "m4v", "webm", "ogv", "mov", "mkv", "pdf", "txt",
];

impl StoredHeaders {
    /// Headers for a file named `file_name` of `mime_type`, shown `disposition` (`inline` or
    /// `attachment`) when it is of a shown type, else a download.
    pub fn new(mime_type: &str, file_name: &str, disposition: &str) -> StoredHeaders {
        let essence = mime_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let extension = file_name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        let shown_type = SHOWN_TYPES.contains(&essence.as_str());
        let shown_name = extension.as_deref().is_none_or(|e| SHOWN_EXTENSIONS.contains(&e));
        if shown_type && shown_name {
            StoredHeaders {
                content_type: mime_type.to_string(),
                content_disposition: content_disposition(disposition, file_name),
            }
        } else {
            StoredHeaders {
                content_type: "application/octet-stream".to_string(),
                content_disposition: content_disposition("attachment", file_name),
            }
        }
    }
}

/// A Content-Disposition header naming the file, readable by old and new clients: an ASCII
/// fallback plus the RFC 5987 UTF-8 form.
pub fn content_disposition(disposition: &str, file_name: &str) -> String {
    let fallback: String = file_name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "{disposition}; filename=\"{fallback}\"; filename*=UTF-8''{}",
        utf8_percent_encode(file_name, ATTR_CHAR_ENCODE)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_disposition_keeps_unicode_names_readable() {
        assert_eq!(
            content_disposition("inline", "été \"1\".mp4"),
            "inline; filename=\"_t_ _1_.mp4\"; filename*=UTF-8''%C3%A9t%C3%A9%20%221%22.mp4"
        );
    }

    #[test]
    fn only_shown_types_under_shown_names_are_inline() {
        for (mime, name) in [
            ("text/html", "a.html"),
            ("text/plain", "x.SVG"),
            ("image/png", "a.html"),
            ("text/xml", "a"),
            ("application/x-drive-test", "a.png"),
        ] {
            let stored = StoredHeaders::new(mime, name, "inline");
            assert_eq!(stored.content_type, "application/octet-stream", "{mime} {name}");
            assert!(
                stored.content_disposition.starts_with("attachment"),
                "{mime} {name}"
            );
        }
        let png = StoredHeaders::new("image/png", "a.png", "inline");
        assert_eq!(
            (png.content_type.as_str(), &png.content_disposition[..6]),
            ("image/png", "inline")
        );
    }
}
