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
/// the store (public objects, and private ones through presigned links). A file of a type a
/// browser would run (HTML, SVG, XML, CSS, JavaScript, by MIME type or name) is stored as an
/// opaque download, so an upload cannot run script on the store's origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHeaders {
    pub content_type: String,
    pub content_disposition: String,
}

impl StoredHeaders {
    /// Headers for a file named `file_name` of `mime_type`, shown `disposition` (`inline` or
    /// `attachment`) unless it is of an active type.
    pub fn new(mime_type: &str, file_name: &str, disposition: &str) -> StoredHeaders {
        let essence = mime_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        let extension = file_name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        let active_type = ["html", "xml", "javascript", "ecmascript", "svg", "css"]
            .iter()
            .any(|word| essence.contains(word));
        let active_name = extension.as_deref().is_some_and(|e| {
            matches!(
                e,
                "html" | "htm" | "shtml" | "xhtml" | "svg" | "svgz" | "xml" | "xsl" | "js" | "mjs" | "css"
            )
        });
        if active_type || active_name {
            StoredHeaders {
                content_type: "application/octet-stream".to_string(),
                content_disposition: content_disposition("attachment", file_name),
            }
        } else {
            StoredHeaders {
                content_type: mime_type.to_string(),
                content_disposition: content_disposition(disposition, file_name),
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
    fn active_types_are_stored_as_downloads() {
        let html = StoredHeaders::new("text/html", "a.html", "inline");
        assert_eq!(html.content_type, "application/octet-stream");
        assert!(html.content_disposition.starts_with("attachment"));
        let named = StoredHeaders::new("text/plain", "x.SVG", "inline");
        assert_eq!(named.content_type, "application/octet-stream");
        let png = StoredHeaders::new("image/png", "a.png", "inline");
        assert_eq!(
            (png.content_type.as_str(), &png.content_disposition[..6]),
            ("image/png", "inline")
        );
    }
}
